import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decideWake, type WakeFacts } from '#src/nodes/wake/wake-decision.ts';

test('one wake per node at a time, none again inside the wake window', () => {
  const base: WakeFacts = { inFlight: false, lastSentAt: undefined, windowMs: 120_000, now: 1_000_000 };
  const table: [string, Partial<WakeFacts>, 'send' | 'in_window'][] = [
    ['never woken', {}, 'send'],
    ['a wake being delivered', { inFlight: true }, 'in_window'],
    ['a wake being delivered, window long past', { inFlight: true, lastSentAt: 0 }, 'in_window'],
    ['sent just now', { lastSentAt: 1_000_000 }, 'in_window'],
    ['sent 1 ms before the window ends', { lastSentAt: 1_000_000 - 119_999 }, 'in_window'],
    ['the window has just ended', { lastSentAt: 1_000_000 - 120_000 }, 'send'],
  ];
  for (const [what, facts, expected] of table) assert.equal(decideWake({ ...base, ...facts }), expected, what);
});
