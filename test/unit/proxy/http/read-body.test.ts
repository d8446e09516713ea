import { test } from 'node:test';
import assert from 'node:assert/strict';
import { discardableRemainder } from '#src/proxy/http/read-body.ts';

const MAX = 64 * 1024;

test('a refused body with a declared length up to the discard bound is read and thrown away', () => {
  for (const length of [MAX + 1, 1_000_000, 16 * 1024 * 1024]) {
    assert.equal(discardableRemainder({ 'content-length': String(length) }, MAX), true, String(length));
  }
});

test('a refused body past the discard bound, or of unknown length, closes the connection instead', () => {
  assert.equal(discardableRemainder({ 'content-length': String(16 * 1024 * 1024 + 1) }, MAX), false);
  assert.equal(discardableRemainder({}, MAX), false);
  assert.equal(discardableRemainder({ 'content-length': 'lots' }, MAX), false);
});

test('the discard bound grows with a large max_request_body_bytes', () => {
  const max = 32 * 1024 * 1024;
  assert.equal(discardableRemainder({ 'content-length': String(2 * max) }, max), true);
  assert.equal(discardableRemainder({ 'content-length': String(2 * max + 1) }, max), false);
});
