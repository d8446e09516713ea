// Issue 43 item 6: ordering rejections (a start-up race, a replayed older revision) kept apart
// from trust failures (forged, not pinned, over the cap), each aged out by its own bound on the
// caller's clock, in the pure classification and in the store's records of each site.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RECORD_REJECTIONS, type Judgement, type RecordRejection } from '#src/mesh/judgement.ts';
import { REJECTION_HELD_MS, rejectionClass, rejectionHeld, type RejectionClass } from '#src/mesh/rejection-class.ts';
import { verdictOf } from '#src/mesh/verdict.ts';
import { RemoteSiteStore } from '#src/mesh/site-store.ts';
import { modelsDigest } from '#src/mesh/record-codec.ts';

const CLASSES: Readonly<Record<RecordRejection, RejectionClass>> = {
  malformed: 'trust',
  oversized: 'trust',
  not_pinned: 'trust',
  bad_signature: 'trust',
  url_mismatch: 'trust',
  over_cap: 'trust',
  replay: 'ordering',
  unknown_digest: 'ordering',
  stale_record: 'ordering',
  future: 'ordering',
};

test('every rejection reason has its class, and only a trust failure costs the relay (verdict reject)', () => {
  assert.deepEqual(Object.keys(CLASSES).sort(), [...RECORD_REJECTIONS].sort(), 'the table names every reason');
  for (const reason of RECORD_REJECTIONS) {
    assert.equal(rejectionClass(reason), CLASSES[reason], reason);
    const verdict = verdictOf({ kind: 'rejected', reason, site: 'b', detail: '' });
    assert.equal(verdict, CLASSES[reason] === 'trust' ? 'reject' : 'ignore', `${reason}: one classification, one verdict`);
  }
});

test('ageing: an ordering rejection is held a minute, a trust failure an hour, by the caller’s clock (table)', () => {
  assert.ok(REJECTION_HELD_MS.ordering < REJECTION_HELD_MS.trust);
  const AT = 5_000_000;
  const table: { reason: RecordRejection; afterMs: number; held: boolean }[] = [
    { reason: 'unknown_digest', afterMs: 0, held: true },
    { reason: 'unknown_digest', afterMs: 59_999, held: true },
    { reason: 'unknown_digest', afterMs: 60_000, held: false },
    { reason: 'unknown_digest', afterMs: 7 * 60_000, held: false },
    { reason: 'replay', afterMs: 30_000, held: true },
    { reason: 'replay', afterMs: 60_000, held: false },
    { reason: 'stale_record', afterMs: 61_000, held: false },
    { reason: 'future', afterMs: 61_000, held: false },
    { reason: 'bad_signature', afterMs: 7 * 60_000, held: true },
    { reason: 'not_pinned', afterMs: 3_599_999, held: true },
    { reason: 'over_cap', afterMs: 3_600_000, held: false },
    { reason: 'malformed', afterMs: -1_000, held: true },
  ];
  for (const row of table) {
    assert.equal(rejectionHeld(row.reason, AT, AT + row.afterMs), row.held, `${row.reason} after ${row.afterMs} ms`);
  }
});

const PINS = [
  { id: 'a', publicKey: 'key-a' },
  { id: 'b', publicKey: 'key-b' },
];
const rejected = (reason: RecordRejection, detail = reason): Judgement => ({ kind: 'rejected', reason, site: 'b', detail });

test('the store keeps the last of each class per site; rows show the latest held and the held trust failure (table)', () => {
  const T0 = 1_000_000;
  const steps: {
    do?: { reason: RecordRejection; atMs: number };
    nowMs: number;
    last: RecordRejection | undefined;
    trust: RecordRejection | undefined;
  }[] = [
    { nowMs: T0, last: undefined, trust: undefined },
    { do: { reason: 'unknown_digest', atMs: T0 }, nowMs: T0 + 1_000, last: 'unknown_digest', trust: undefined },
    { nowMs: T0 + 60_000, last: undefined, trust: undefined },
    { do: { reason: 'bad_signature', atMs: T0 + 70_000 }, nowMs: T0 + 70_000, last: 'bad_signature', trust: 'bad_signature' },
    { do: { reason: 'replay', atMs: T0 + 80_000 }, nowMs: T0 + 80_000, last: 'replay', trust: 'bad_signature' },
    { do: { reason: 'unknown_digest', atMs: T0 + 90_000 }, nowMs: T0 + 90_000, last: 'unknown_digest', trust: 'bad_signature' },
    { nowMs: T0 + 150_000, last: 'bad_signature', trust: 'bad_signature' },
    { do: { reason: 'over_cap', atMs: T0 + 200_000 }, nowMs: T0 + 200_000, last: 'over_cap', trust: 'over_cap' },
    { nowMs: T0 + 200_000 + 3_599_999, last: 'over_cap', trust: 'over_cap' },
    { nowMs: T0 + 200_000 + 3_600_000, last: undefined, trust: undefined },
  ];
  const store = new RemoteSiteStore({ ownSite: 'a', pins: PINS, digestOf: modelsDigest });
  for (const [i, step] of steps.entries()) {
    if (step.do !== undefined) store.apply(rejected(step.do.reason), 'peer-x', step.do.atMs);
    const row = store.adminRows(step.nowMs, 15_000).find((r) => r.id === 'b') ?? assert.fail();
    assert.equal(row.last_rejection?.reason, step.last, `step ${i}: last`);
    assert.equal(row.last_trust_failure?.reason, step.trust, `step ${i}: trust`);
    if (row.last_rejection !== undefined) assert.equal(row.last_rejection.class, rejectionClass(row.last_rejection.reason));
    if (step.do !== undefined) assert.equal(row.last_rejection?.age_ms, step.nowMs - step.do.atMs, `step ${i}: age`);
  }
});

test('the store: a replay caught at apply (judged accepted, not newer) is recorded as an ordering rejection', () => {
  const store = new RemoteSiteStore({ ownSite: 'a', pins: PINS, digestOf: modelsDigest });
  const record = {
    v: 1 as const,
    site: 'b',
    url: 'http://127.0.0.1:1/b',
    revision: 10,
    issued_at: 0,
    models: [],
    load: { in_flight: 0, queued: 0, slots: 1 },
  };
  store.apply({ kind: 'accepted', record }, 'peer-b', 0);
  assert.equal(store.apply({ kind: 'accepted', record }, 'peer-x', 500).kind, 'rejected');
  const row = store.adminRows(1_000, 15_000).find((r) => r.id === 'b');
  assert.deepEqual(row?.last_rejection, {
    reason: 'replay',
    class: 'ordering',
    detail: 'revision 10 <= 10',
    peer: 'peer-x',
    age_ms: 500,
  });
  assert.equal(row?.last_trust_failure, undefined);
  assert.equal(store.adminRows(60_500, 15_000).find((r) => r.id === 'b')?.last_rejection, undefined);
});

test('the store: rejections naming no pinned site are kept nowhere (the records are bounded by the pins)', () => {
  const store = new RemoteSiteStore({ ownSite: 'a', pins: PINS, digestOf: modelsDigest });
  for (let i = 0; i < 100; i++) store.apply({ kind: 'rejected', reason: 'not_pinned', site: `x${i}`, detail: '' }, 'p', i);
  assert.deepEqual(
    store.adminRows(100, 15_000).map((r) => [r.id, r.last_rejection]),
    [['b', undefined]],
  );
});
