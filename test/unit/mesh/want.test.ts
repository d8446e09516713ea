import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mayWant } from '#src/mesh/want.ts';

test('wants for one site: at most one per heartbeat, backing off while they bring nothing acceptable', () => {
  const cases: { history: { lastSentAt: number; streak: number } | undefined; now: number; want: boolean }[] = [
    { history: undefined, now: 0, want: true },
    { history: { lastSentAt: 1_000, streak: 1 }, now: 5_999, want: false },
    { history: { lastSentAt: 1_000, streak: 1 }, now: 6_000, want: true },
    { history: { lastSentAt: 1_000, streak: 2 }, now: 10_999, want: false },
    { history: { lastSentAt: 1_000, streak: 2 }, now: 11_000, want: true },
    { history: { lastSentAt: 1_000, streak: 3 }, now: 21_000, want: true },
    { history: { lastSentAt: 0, streak: 50 }, now: 159_999, want: false },
    { history: { lastSentAt: 0, streak: 50 }, now: 160_000, want: true },
  ];
  for (const c of cases) assert.equal(mayWant(c.history, c.now, 5_000), c.want, JSON.stringify(c));
});
