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

test('wants for one site go out at most once per interval', () => {
  assert.equal(mayWant(undefined, 0, 5_000), true);
  assert.equal(mayWant(1_000, 5_999, 5_000), false);
  assert.equal(mayWant(1_000, 6_000, 5_000), true);
});
