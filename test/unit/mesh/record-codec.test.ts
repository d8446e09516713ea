import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, verify } from 'node:crypto';
import { canonicalBytes, decodeRecord, decodeWant, encodeWant, modelsDigest, signRecord } from '#src/mesh/record-codec.ts';
import { newSiteKey, pinnedPublicKey } from '#src/mesh/site-key-file.ts';
import type { SiteRecord } from '#src/mesh/site-record.ts';

const KEY = newSiteKey();
const RECORD: SiteRecord = {
  v: 1,
  site: 'paris',
  url: 'http://127.0.0.1:8080',
  revision: 1_807_000_000_000,
  issued_at: 1_764_547_200_000,
  models: [{ id: 'llama-8b', ctx: 8192 }],
  load: { in_flight: 0, queued: 0, slots: 4 },
};
const decoder = new TextDecoder();

test('a signed record is UTF-8 JSON {record, sig}; sig is Ed25519 over the RFC 8785 form of the record', () => {
  const data = signRecord(RECORD, KEY);
  const message = JSON.parse(decoder.decode(data)) as { record: unknown; sig: string };
  assert.deepEqual(Object.keys(message).sort(), ['record', 'sig']);
  assert.deepEqual(message.record, RECORD);
  assert.match(message.sig, /^[A-Za-z0-9_-]{86}$/);
  const canonical =
    '{"issued_at":1764547200000,"load":{"in_flight":0,"queued":0,"slots":4},"models":[{"ctx":8192,"id":"llama-8b"}],"revision":1807000000000,"site":"paris","url":"http://127.0.0.1:8080","v":1}';
  assert.equal(decoder.decode(canonicalBytes(RECORD)), canonical);
  assert.ok(verify(null, Buffer.from(canonical), pinnedPublicKey(KEY.publicKey), Buffer.from(message.sig, 'base64url')));
});

test('signRecord refuses a record receivers would reject as malformed', () => {
  const bad: readonly [string, unknown][] = [
    ['fractional revision', { ...RECORD, revision: 1.5 }],
    ['no models and no digest', { ...RECORD, models: undefined }],
    ['bad site', { ...RECORD, site: 'a b' }],
  ];
  for (const [name, record] of bad)
    assert.throws(() => signRecord(record as SiteRecord, KEY), /signRecord: the record is malformed/, name);
});

test('modelsDigest is the base64url SHA-256 of the canonical models array: key order inside a model does not matter, list order does', () => {
  const models = [{ id: 'a', ctx: 1 }, { id: 'b' }];
  assert.equal(modelsDigest(models), createHash('sha256').update('[{"ctx":1,"id":"a"},{"id":"b"}]').digest('base64url'));
  assert.equal(modelsDigest([{ ctx: 1, id: 'a' }, { id: 'b' }]), modelsDigest(models));
  assert.notEqual(modelsDigest([{ id: 'b' }, { id: 'a', ctx: 1 }]), modelsDigest(models));
  assert.match(modelsDigest([]), /^[A-Za-z0-9_-]{43}$/);
});

test('want messages round-trip, and anything else is not a want', () => {
  assert.equal(decoder.decode(encodeWant('paris')), '{"want":"paris"}');
  assert.equal(decodeWant(encodeWant('paris'), 1024), 'paris');
  const notWants: readonly [string, Uint8Array, number][] = [
    ['a record', signRecord(RECORD, KEY), 1 << 20],
    ['a bad site id', new TextEncoder().encode('{"want":"a b"}'), 1024],
    ['an extra field', new TextEncoder().encode('{"want":"paris","x":1}'), 1024],
    ['too large', encodeWant('paris'), 5],
    ['not JSON', new TextEncoder().encode('want paris'), 1024],
  ];
  for (const [name, data, max] of notWants) assert.equal(decodeWant(data, max), undefined, name);
  assert.throws(() => encodeWant('a\nb'), /not a site id/);
});

test('a deeply nested extra field (as deep as a 1 MiB message allows) never throws', () => {
  const deep = `${'['.repeat(500_000)}${']'.repeat(500_000)}`;
  const sig = 'A'.repeat(86);
  const data = new TextEncoder().encode(
    `{"record":{"v":1,"site":"paris","url":"http://127.0.0.1:1","revision":1,"issued_at":1,"models":[],"load":{"in_flight":0,"queued":0,"slots":0},"x":${deep}},"sig":"${sig}"}`,
  );
  const decoded = decodeRecord(data, 1 << 20);
  // Either it is read (and its signature is then checked) or it is malformed; never an exception.
  assert.ok(decoded.ok || decoded.reason === 'malformed');
});

test('decoding checks the size before reading anything', () => {
  const decoded = decodeRecord(new Uint8Array(2048).fill(0x7b), 2047);
  assert.deepEqual(decoded, { ok: false, reason: 'oversized', site: undefined, detail: '2048 bytes, over the 2047-byte limit' });
});
