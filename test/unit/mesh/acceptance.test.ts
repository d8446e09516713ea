import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sign } from 'node:crypto';
import canonicalize from 'canonicalize';
import { judgeMessage, type JudgeContext } from '#src/mesh/acceptance.ts';
import { modelsDigest, signRecord } from '#src/mesh/record-codec.ts';
import { newSiteKey, pinnedPublicKey } from '#src/mesh/site-key-file.ts';
import { RECORD_REJECTIONS, type RecordRejection } from '#src/mesh/judgement.ts';
import type { SiteKey } from '#src/mesh/site-key.ts';
import type { SiteRecord, SiteRecordModel } from '#src/mesh/site-record.ts';

const NOW = 1_764_547_200_000;
const FRESHNESS_MS = 15_000;
/** The oldest issued_at a receiver takes: freshness + max_clock_skew (30 s) ago. */
const OLDEST = NOW - FRESHNESS_MS - 30_000;
const PARIS = newSiteKey();
const BERLIN = newSiteKey();
const MALLORY = newSiteKey(); // not pinned anywhere
const MODELS: readonly SiteRecordModel[] = [
  { id: 'llama-8b', ctx: 8192 },
  { id: 'qwen-32b', ctx: 32768, on_demand: true },
];

function record(overrides: Record<string, unknown> = {}): SiteRecord {
  return {
    v: 1,
    site: 'paris',
    url: 'http://127.0.0.1:8080',
    revision: 2000,
    issued_at: NOW,
    models: MODELS,
    load: { in_flight: 1, queued: 0, slots: 8 },
    ...overrides,
  } as SiteRecord;
}

/** Signs whatever object is given, valid or not (signRecord refuses malformed records). */
function rawSigned(value: unknown, key: SiteKey = PARIS): Uint8Array {
  const sig = sign(null, Buffer.from(canonicalize(value) ?? ''), key.privateKey).toString('base64url');
  return new TextEncoder().encode(JSON.stringify({ record: value, sig }));
}

const text = (s: string): Uint8Array => new TextEncoder().encode(s);

interface Known {
  readonly highest?: Readonly<Record<string, number>>;
  readonly models?: readonly SiteRecordModel[];
  readonly maxModels?: number;
  readonly maxBytes?: number;
  /** `[[mesh.sites]] url` pins. */
  readonly urls?: Readonly<Record<string, string>>;
}

function context(known: Known = {}, calls: string[] = []): JudgeContext {
  return {
    pins: new Map([
      ['paris', pinnedPublicKey(PARIS.publicKey)],
      ['berlin', pinnedPublicKey(BERLIN.publicKey)],
    ]),
    ...(known.urls === undefined ? {} : { pinnedUrls: new Map(Object.entries(known.urls)) }),
    highestRevision: (site) => {
      calls.push(`highestRevision(${site})`);
      return known.highest?.[site];
    },
    knownModels: (site, digest) => {
      calls.push(`knownModels(${site})`);
      return known.models !== undefined && modelsDigest(known.models) === digest ? known.models : undefined;
    },
    nowWallMs: NOW,
    maxClockSkewMs: 30_000,
    freshnessMs: FRESHNESS_MS,
    maxModels: known.maxModels ?? 256,
    maxBytes: known.maxBytes ?? 256 * 1024,
  };
}

const manyModels = (n: number): SiteRecordModel[] =>
  Array.from({ length: n }, (_, i) => ({ id: `m${String(i).padStart(4, '0')}` }));
const flipped = (data: Uint8Array): Uint8Array => {
  const json = JSON.parse(new TextDecoder().decode(data)) as { record: unknown; sig: string };
  const sig = Buffer.from(json.sig, 'base64url');
  sig[0] = (sig[0] ?? 0) ^ 1;
  return text(JSON.stringify({ ...json, sig: sig.toString('base64url') }));
};
const tampered = (data: Uint8Array, change: (r: Record<string, unknown>) => void): Uint8Array => {
  const json = JSON.parse(new TextDecoder().decode(data)) as { record: Record<string, unknown>; sig: string };
  change(json.record);
  return text(JSON.stringify(json));
};

const REJECTED: readonly { name: string; data: Uint8Array; known?: Known; reason: RecordRejection }[] = [
  {
    name: 'a message over max_message_bytes',
    data: signRecord(record({ models: manyModels(100) }), PARIS),
    known: { maxBytes: 1024 },
    reason: 'oversized',
  },
  {
    name: 'an oversized message that is also garbage',
    data: text('x'.repeat(2000)),
    known: { maxBytes: 1024 },
    reason: 'oversized',
  },
  { name: 'not JSON', data: text('{"record":'), reason: 'malformed' },
  { name: 'not UTF-8', data: new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]), reason: 'malformed' },
  { name: 'a JSON array', data: text('[1,2]'), reason: 'malformed' },
  { name: 'a want message', data: text('{"want":"paris"}'), reason: 'malformed' },
  { name: 'no sig', data: text(JSON.stringify({ record: record() })), reason: 'malformed' },
  { name: 'a sig of the wrong length', data: text(JSON.stringify({ record: record(), sig: 'abc' })), reason: 'malformed' },
  { name: 'v 2', data: rawSigned(record({ v: 2 })), reason: 'malformed' },
  { name: 'no v', data: rawSigned({ ...record(), v: undefined }), reason: 'malformed' },
  { name: 'a site that is not a site id', data: rawSigned(record({ site: 'par is\n' })), reason: 'malformed' },
  { name: 'a url that is not http(s)', data: rawSigned(record({ url: 'file:///etc/passwd' })), reason: 'malformed' },
  { name: 'a url with credentials', data: rawSigned(record({ url: 'http://u:p@127.0.0.1:8080' })), reason: 'malformed' },
  {
    name: 'a url not in normal form (trailing slash)',
    data: rawSigned(record({ url: 'http://127.0.0.1:8080/' })),
    reason: 'malformed',
  },
  { name: 'a url ending in /v1', data: rawSigned(record({ url: 'http://127.0.0.1:8080/v1' })), reason: 'malformed' },
  { name: 'a fractional revision', data: rawSigned(record({ revision: 1.5 })), reason: 'malformed' },
  { name: 'a revision beyond safe integers', data: rawSigned(record({ revision: 2 ** 53 + 2 })), reason: 'malformed' },
  { name: 'a negative revision', data: rawSigned(record({ revision: -1 })), reason: 'malformed' },
  { name: 'a revision as a string', data: rawSigned(record({ revision: '2000' })), reason: 'malformed' },
  { name: 'issued_at as a date string', data: rawSigned(record({ issued_at: '2026-12-01T00:00:00Z' })), reason: 'malformed' },
  { name: 'models not an array', data: rawSigned(record({ models: { id: 'm' } })), reason: 'malformed' },
  { name: 'a model with an empty id', data: rawSigned(record({ models: [{ id: '' }] })), reason: 'malformed' },
  { name: 'a model id over 256 characters', data: rawSigned(record({ models: [{ id: 'm'.repeat(257) }] })), reason: 'malformed' },
  { name: 'a model ctx of 0', data: rawSigned(record({ models: [{ id: 'm', ctx: 0 }] })), reason: 'malformed' },
  { name: 'a fractional ctx', data: rawSigned(record({ models: [{ id: 'm', ctx: 4096.5 }] })), reason: 'malformed' },
  { name: 'on_demand not a boolean', data: rawSigned(record({ models: [{ id: 'm', on_demand: 'yes' }] })), reason: 'malformed' },
  {
    name: 'both models and models_digest',
    data: rawSigned(record({ models_digest: modelsDigest(MODELS) })),
    reason: 'malformed',
  },
  { name: 'neither models nor models_digest', data: rawSigned({ ...record(), models: undefined }), reason: 'malformed' },
  {
    name: 'a models_digest that is not a digest',
    data: rawSigned({ ...record(), models: undefined, models_digest: 'abc' }),
    reason: 'malformed',
  },
  { name: 'no load', data: rawSigned({ ...record(), load: undefined }), reason: 'malformed' },
  { name: 'a negative load', data: rawSigned(record({ load: { in_flight: -1, queued: 0, slots: 0 } })), reason: 'malformed' },
  { name: 'a site no one pinned', data: signRecord(record({ site: 'mallory' }), MALLORY), reason: 'not_pinned' },
  {
    name: 'an unpinned site signing with a pinned key',
    data: signRecord(record({ site: 'mallory' }), PARIS),
    reason: 'not_pinned',
  },
  { name: 'berlin speaking for paris', data: signRecord(record(), BERLIN), reason: 'bad_signature' },
  { name: 'an unpinned key speaking for paris', data: signRecord(record(), MALLORY), reason: 'bad_signature' },
  { name: 'a corrupted signature', data: flipped(signRecord(record(), PARIS)), reason: 'bad_signature' },
  {
    name: 'models changed after signing',
    data: tampered(signRecord(record(), PARIS), (r) => (r['models'] = [{ id: 'evil' }])),
    reason: 'bad_signature',
  },
  {
    name: 'a field added after signing',
    data: tampered(signRecord(record(), PARIS), (r) => (r['note'] = 'hi')),
    reason: 'bad_signature',
  },
  {
    name: 'the url changed after signing',
    data: tampered(signRecord(record(), PARIS), (r) => (r['url'] = 'http://127.0.0.9:1')),
    reason: 'bad_signature',
  },
  {
    name: 'a url other than the one pinned for paris',
    data: signRecord(record({ url: 'http://127.0.0.9:8080' }), PARIS),
    known: { urls: { paris: 'http://127.0.0.1:8080' } },
    reason: 'url_mismatch',
  },
  {
    name: 'forged with another url (forgery wins)',
    data: signRecord(record({ url: 'http://127.0.0.9:8080' }), BERLIN),
    known: { urls: { paris: 'http://127.0.0.1:8080' } },
    reason: 'bad_signature',
  },
  { name: 'issued_at beyond the clock skew', data: signRecord(record({ issued_at: NOW + 30_001 }), PARIS), reason: 'future' },
  {
    name: 'issued_at older than freshness + max_clock_skew (a captured record replayed)',
    data: signRecord(record({ issued_at: OLDEST - 1 }), PARIS),
    reason: 'stale_record',
  },
  { name: 'issued_at long ago', data: signRecord(record({ issued_at: 0 }), PARIS), reason: 'stale_record' },
  {
    name: 'a stale heartbeat',
    data: signRecord(
      { ...record({ issued_at: OLDEST - 60_000 }), models: undefined, models_digest: modelsDigest(MODELS) },
      PARIS,
    ),
    known: { models: MODELS },
    reason: 'stale_record',
  },
  { name: 'the same revision again', data: signRecord(record(), PARIS), known: { highest: { paris: 2000 } }, reason: 'replay' },
  {
    name: 'an older revision',
    data: signRecord(record({ revision: 1999 }), PARIS),
    known: { highest: { paris: 2000 } },
    reason: 'replay',
  },
  {
    name: 'a heartbeat whose digest is not held',
    data: signRecord({ ...record(), models: undefined, models_digest: modelsDigest(manyModels(3)) }, PARIS),
    known: { models: MODELS },
    reason: 'unknown_digest',
  },
  {
    name: 'a heartbeat before any full record',
    data: signRecord({ ...record(), models: undefined, models_digest: modelsDigest(MODELS) }, PARIS),
    reason: 'unknown_digest',
  },
  {
    name: 'one model over the cap',
    data: signRecord(record({ models: manyModels(11) }), PARIS),
    known: { maxModels: 10 },
    reason: 'over_cap',
  },
  {
    name: 'a heartbeat for a list now over a lowered cap',
    data: signRecord({ ...record(), models: undefined, models_digest: modelsDigest(MODELS) }, PARIS),
    known: { models: MODELS, maxModels: 1 },
    reason: 'over_cap',
  },
  // The order of checks: the first failing one decides.
  {
    name: 'forged and a replay (forgery wins: no revision is read before the signature)',
    data: signRecord(record({ revision: 1 }), BERLIN),
    known: { highest: { paris: 2000 } },
    reason: 'bad_signature',
  },
  { name: 'forged and in the future', data: signRecord(record({ issued_at: NOW + 3_600_000 }), BERLIN), reason: 'bad_signature' },
  {
    name: 'forged and over the cap',
    data: signRecord(record({ models: manyModels(11) }), BERLIN),
    known: { maxModels: 10 },
    reason: 'bad_signature',
  },
  { name: 'unpinned and forged', data: signRecord(record({ site: 'mallory' }), BERLIN), reason: 'not_pinned' },
  {
    name: 'in the future and a replay',
    data: signRecord(record({ issued_at: NOW + 60_000 }), PARIS),
    known: { highest: { paris: 2000 } },
    reason: 'future',
  },
  { name: 'forged and stale (forgery wins)', data: signRecord(record({ issued_at: 0 }), BERLIN), reason: 'bad_signature' },
  {
    name: 'stale and a replay (the age is read first)',
    data: signRecord(record({ issued_at: OLDEST - 1 }), PARIS),
    known: { highest: { paris: 2000 } },
    reason: 'stale_record',
  },
  {
    name: 'a replay and over the cap',
    data: signRecord(record({ models: manyModels(11) }), PARIS),
    known: { highest: { paris: 2000 }, maxModels: 10 },
    reason: 'replay',
  },
];

for (const { name, data, known, reason } of REJECTED) {
  test(`rejects ${name}: ${reason}`, () => {
    const judgement = judgeMessage(data, context(known));
    assert.equal(judgement.kind, 'rejected');
    assert.equal(
      judgement.kind === 'rejected' ? judgement.reason : undefined,
      reason,
      judgement.kind === 'rejected' ? judgement.detail : '',
    );
  });
}

test('every rejection reason has a case in the table', () => {
  assert.deepEqual(new Set(REJECTED.map((c) => c.reason)), new Set(RECORD_REJECTIONS));
});

test('a forged message consults nothing the receiver knows and says nothing about the record', () => {
  const calls: string[] = [];
  const judgement = judgeMessage(
    signRecord(record({ revision: 987_654_321 }), BERLIN),
    context({ highest: { paris: 2000 }, models: MODELS }, calls),
  );
  assert.deepEqual(calls, []);
  assert.equal(judgement.kind, 'rejected');
  assert.ok(judgement.kind === 'rejected' && !judgement.detail.includes('987654321') && !judgement.detail.includes('2000'));
  assert.equal(judgement.kind === 'rejected' ? judgement.site : undefined, 'paris');
});

test('the claimed site is reported only when it reads as a site id', () => {
  const bad = judgeMessage(rawSigned(record({ site: 'evil\nlog line', revision: 'x' })), context());
  assert.equal(bad.kind === 'rejected' ? bad.site : 'accepted', undefined);
  const readable = judgeMessage(rawSigned(record({ revision: 'x' })), context());
  assert.equal(readable.kind === 'rejected' ? readable.site : 'accepted', 'paris');
});

const ACCEPTED: readonly { name: string; data: Uint8Array; known?: Known; models: readonly SiteRecordModel[] }[] = [
  { name: 'a first full record', data: signRecord(record(), PARIS), models: MODELS },
  {
    name: 'a higher revision',
    data: signRecord(record({ revision: 2001 }), PARIS),
    known: { highest: { paris: 2000 } },
    models: MODELS,
  },
  {
    name: 'a record from another pinned site',
    data: signRecord(record({ site: 'berlin' }), BERLIN),
    known: { highest: { paris: 9999 } },
    models: MODELS,
  },
  { name: 'no models', data: signRecord(record({ models: [] }), PARIS), known: { maxModels: 1 }, models: [] },
  {
    name: 'exactly the cap',
    data: signRecord(record({ models: manyModels(10) }), PARIS),
    known: { maxModels: 10 },
    models: manyModels(10),
  },
  { name: 'issued_at exactly at the skew limit', data: signRecord(record({ issued_at: NOW + 30_000 }), PARIS), models: MODELS },
  {
    name: 'issued_at exactly freshness + max_clock_skew ago',
    data: signRecord(record({ issued_at: OLDEST }), PARIS),
    models: MODELS,
  },
  {
    name: 'a heartbeat with a held digest',
    data: signRecord({ ...record({ revision: 2001 }), models: undefined, models_digest: modelsDigest(MODELS) }, PARIS),
    known: { highest: { paris: 2000 }, models: MODELS },
    models: MODELS,
  },
  {
    name: 'unknown fields, signed',
    data: signRecord(
      record({ region: 'eu-west', load: { in_flight: 0, queued: 0, slots: 1, score: 0.5 }, models: [{ id: 'm', quant: 'q4' }] }),
      PARIS,
    ),
    models: [{ id: 'm', quant: 'q4' } as SiteRecordModel],
  },
  {
    name: 'a record built with undefined optional fields (left out on the wire)',
    data: signRecord(record({ models: [{ id: 'm', ctx: undefined, on_demand: undefined }], note: undefined }), PARIS),
    models: [{ id: 'm' }],
  },
  {
    name: 'a message exactly max_message_bytes long',
    data: signRecord(record(), PARIS),
    known: { maxBytes: signRecord(record(), PARIS).byteLength },
    models: MODELS,
  },
];

for (const { name, data, known, models } of ACCEPTED) {
  test(`accepts ${name}`, () => {
    const judgement = judgeMessage(data, context(known));
    assert.equal(judgement.kind, 'accepted', judgement.kind === 'rejected' ? `${judgement.reason}: ${judgement.detail}` : '');
    assert.deepEqual(judgement.kind === 'accepted' ? judgement.record.models : undefined, models);
  });
}

test('the signature covers the canonical form: key order and whitespace of the sender do not matter', () => {
  const original = record({ models: [{ ctx: 4096, id: 'b' }], extra: { z: 1, a: [true, null, 'é'] } });
  const sig = sign(null, Buffer.from(canonicalize(original) ?? ''), PARIS.privateKey).toString('base64url');
  const reordered = {
    load: original.load,
    models: [{ id: 'b', ctx: 4096 }],
    extra: { a: [true, null, 'é'], z: 1 },
    issued_at: NOW,
    url: original.url,
    site: 'paris',
    revision: 2000,
    v: 1,
  };
  const data = text(`{ "sig" : "${sig}",\n  "record": ${JSON.stringify(reordered, null, 2)} }`);
  const judgement = judgeMessage(data, context());
  assert.equal(judgement.kind, 'accepted', judgement.kind === 'rejected' ? judgement.detail : '');
});

test('a record naming the url pinned for its site is accepted; a pin for another site does not apply', () => {
  const pinned = judgeMessage(signRecord(record(), PARIS), context({ urls: { paris: 'http://127.0.0.1:8080' } }));
  assert.equal(pinned.kind, 'accepted');
  const other = judgeMessage(
    signRecord(record({ url: 'http://127.0.0.9:8080' }), PARIS),
    context({ urls: { berlin: 'http://127.0.0.1:8080' } }),
  );
  assert.equal(other.kind, 'accepted');
});
