import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fastMessageId, type RawGossipMessage } from '#src/mesh/gossip/fast-message-id.ts';

const bytes = (...xs: number[]): Uint8Array => Uint8Array.from(xs);
const BASE: RawGossipMessage = {
  from: bytes(1, 2),
  seqno: bytes(3),
  topic: 'switchyard/sites/1',
  data: bytes(4, 5, 6),
  signature: bytes(7),
  key: bytes(8),
};

test("a signed message's key is its author and sequence number, as gossipsub's seen cache keys it", () => {
  assert.equal(fastMessageId({ ...BASE }), fastMessageId({ ...BASE, data: bytes(9), signature: bytes(9) }));
  assert.notEqual(fastMessageId({ ...BASE, from: bytes(1, 3) }), fastMessageId(BASE));
  assert.notEqual(fastMessageId({ ...BASE, seqno: bytes(4) }), fastMessageId(BASE));
  // Joined with a separator: moving a byte from one field to the other changes the key.
  assert.notEqual(
    fastMessageId({ ...BASE, from: bytes(1, 2, 3), seqno: bytes() }),
    fastMessageId({ ...BASE, from: bytes(1, 2), seqno: bytes(3) }),
  );
});

test('a message without author or sequence number is keyed by all its bytes', () => {
  const unsigned: RawGossipMessage = { topic: 'switchyard/sites/1', data: bytes(1, 2) };
  assert.equal(fastMessageId(unsigned), fastMessageId({ ...unsigned, data: bytes(1, 2) }));
  assert.notEqual(fastMessageId(unsigned), fastMessageId({ ...unsigned, data: bytes(1, 3) }));
  assert.notEqual(
    fastMessageId({ ...unsigned, data: bytes(1, 2), key: bytes() }),
    fastMessageId({ ...unsigned, data: bytes(1), key: bytes(2) }),
  );
});
