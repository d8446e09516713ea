import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeWant, mayWant, parseWant } from '#src/mesh/want.ts';

const bytes = (text: string) => new TextEncoder().encode(text);

test('want messages: encoded as {"want": site}; anything else is not a want', () => {
  assert.equal(parseWant(encodeWant('site-c')), 'site-c');
  assert.equal(new TextDecoder().decode(encodeWant('c')), '{"want":"c"}');
  const notWants = ['{"want":""}', '{"want":1}', '{"want":"c","extra":1}', '["want"]', 'null', '{bad', '{"record":{},"sig":"x"}', `{"want":"${'x'.repeat(600)}"}`];
  for (const text of notWants) assert.equal(parseWant(bytes(text)), undefined, text);
  assert.equal(parseWant(new Uint8Array([0xff, 0xfe])), undefined);
});

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
