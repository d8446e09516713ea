import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fastMessageId, type RawGossipMessage } from '#src/mesh/gossip/fast-message-id.ts';

const bytes = (...xs: number[]): Uint8Array => Uint8Array.from(xs);
const BASE: RawGossipMessage = { from: bytes(1, 2), seqno: bytes(3), topic: 'switchyard/sites/1', data: bytes(4, 5, 6), signature: bytes(7), key: bytes(8) };

test('byte-identical copies of a message share one key', () => {
  assert.equal(fastMessageId({ ...BASE }), fastMessageId({ ...BASE, data: bytes(4, 5, 6) }));
});

test('a copy that differs in any field has another key (a forged copy never stands for the genuine one)', () => {
  const variants: readonly [string, RawGossipMessage][] = [
    ['from', { ...BASE, from: bytes(1, 3) }],
    ['seqno', { ...BASE, seqno: bytes(4) }],
    ['topic', { ...BASE, topic: 'other' }],
    ['data', { ...BASE, data: bytes(4, 5, 7) }],
    ['signature', { ...BASE, signature: bytes(9) }],
    ['key', { ...BASE, key: undefined }],
  ];
  for (const [field, variant] of variants) assert.notEqual(fastMessageId(variant), fastMessageId(BASE), field);
});

test('field boundaries count: moving a byte from one field to the next changes the key', () => {
  assert.notEqual(fastMessageId({ ...BASE, from: bytes(1, 2, 3), seqno: bytes() }), fastMessageId({ ...BASE, from: bytes(1, 2), seqno: bytes(3) }));
});
