import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Judgement } from '#src/mesh/judgement.ts';
import type { SiteRecord, SiteRecordModel } from '#src/mesh/site-record.ts';
import { loadScore, RemoteSiteStore } from '#src/mesh/site-store.ts';
import { modelsDigest as digestOf } from '#src/mesh/record-codec.ts';

const PINS = [
  { id: 'a', publicKey: 'key-a' },
  { id: 'b', publicKey: 'key-b' },
  { id: 'c', publicKey: 'key-c' },
];
const FRESH_MS = 15_000;

function record(site: string, revision: number, models?: SiteRecordModel[], extra: Partial<SiteRecord> = {}): SiteRecord {
  return {
    v: 1,
    site,
    url: `http://127.0.0.1:9/${site}`,
    revision,
    issued_at: 0,
    ...(models === undefined ? {} : { models }),
    load: { in_flight: 2, queued: 2, slots: 8 },
    ...extra,
  };
}
const accepted = (r: SiteRecord): Judgement => ({ kind: 'accepted', record: r });
const rejected = (reason: Extract<Judgement, { kind: 'rejected' }>['reason'], site?: string): Judgement => ({
  kind: 'rejected',
  reason,
  site,
  detail: reason,
});

function store(): RemoteSiteStore {
  return new RemoteSiteStore({ ownSite: 'a', pins: PINS, digestOf });
}

test('store: every pinned site but this one is listed, stale until a record is accepted', () => {
  const s = store();
  assert.deepEqual(
    s.views(0, FRESH_MS).map((v) => [v.id, v.fresh, v.models.size, v.url]),
    [
      ['b', false, 0, undefined],
      ['c', false, 0, undefined],
    ],
  );
});

test('store: an accepted record fills the site view (models, url, load score) and makes it fresh', () => {
  const s = store();
  const outcome = s.apply(
    accepted(
      record('b', 10, [
        { id: 'm', ctx: 8192 },
        { id: 'n', on_demand: true },
      ]),
    ),
    'peer-b',
    1_000,
  );
  assert.deepEqual(outcome, { kind: 'accepted', site: 'b', full: true, modelsChanged: true });
  const b = s.views(1_000, FRESH_MS).find((v) => v.id === 'b');
  assert.equal(b?.fresh, true);
  assert.equal(b?.url, 'http://127.0.0.1:9/b');
  assert.deepEqual(
    [...(b?.models ?? [])],
    [
      ['m', { ctx: 8192, onDemand: false }],
      ['n', { ctx: undefined, onDemand: true }],
    ],
  );
  assert.equal(b?.load, 0.5);
  assert.equal(s.highestRevision('b'), 10);
  assert.equal(s.views(1_000 + FRESH_MS + 1, FRESH_MS).find((v) => v.id === 'b')?.fresh, false);
});

test('store: a rejection never changes what is known, and is noted with its reason and age', () => {
  const s = store();
  s.apply(accepted(record('b', 10, [{ id: 'm' }])), 'peer-b', 1_000);
  const before = JSON.stringify(s.views(2_000, FRESH_MS).map((v) => ({ ...v, models: [...v.models] })));
  for (const reason of ['bad_signature', 'replay', 'future', 'over_cap', 'unknown_digest', 'malformed'] as const) {
    const outcome = s.apply(rejected(reason, 'b'), 'peer-x', 1_500);
    assert.equal(outcome.kind, 'rejected', reason);
  }
  assert.equal(JSON.stringify(s.views(2_000, FRESH_MS).map((v) => ({ ...v, models: [...v.models] }))), before);
  assert.equal(s.highestRevision('b'), 10);
  const row = s.adminRows(2_000, FRESH_MS).find((r) => r.id === 'b');
  const last = { reason: 'malformed', class: 'trust', detail: 'malformed', peer: 'peer-x', age_ms: 500 };
  assert.deepEqual(row?.last_rejection, last);
  assert.deepEqual(row?.last_trust_failure, last);
  assert.equal(row?.revision, 10);
  assert.equal(row?.age_ms, 1_000);
});

test('store: held revisions survive a restart under the key they were accepted with', () => {
  const s = store();
  s.apply(accepted(record('b', 10, [{ id: 'm' }])), 'p', 0);
  const held = s.heldRevisions();
  assert.deepEqual([...held.keys()], ['b']);
  const again = store();
  again.restore(new Map([...held].map(([site, h]) => [site, h.revision])));
  assert.equal(again.highestRevision('b'), 10);
  assert.equal(
    again.apply(accepted(record('b', 10, [{ id: 'm' }])), 'p', 0).kind,
    'rejected',
    'the same revision after the restart is a replay',
  );
  again.restore(new Map([['b', 3]]));
  assert.equal(again.highestRevision('b'), 10, 'a restore never lowers what is held');
});

test('store: a lower or equal revision is ignored even if judged accepted', () => {
  const s = store();
  s.apply(accepted(record('b', 10, [{ id: 'm' }])), 'p', 0);
  const outcome = s.apply(accepted(record('b', 10, [{ id: 'other' }])), 'p', 100);
  assert.equal(outcome.kind === 'rejected' && outcome.reason, 'replay');
  assert.deepEqual([...(s.views(100, FRESH_MS)[0]?.models.keys() ?? [])], ['m']);
});

test('store: a heartbeat naming the held digest refreshes the site and keeps its models', () => {
  const s = store();
  const models = [{ id: 'm', ctx: 4096 }];
  s.apply(accepted(record('b', 10, models)), 'p', 0);
  const digest = digestOf(models);
  assert.deepEqual(s.knownModels('b', digest), models);
  assert.equal(s.knownModels('b', 'other-digest'), undefined);
  // The acceptance function fills `models` from knownModels for a heartbeat.
  const outcome = s.apply(accepted(record('b', 11, models, { models_digest: digest })), 'p', 14_000);
  assert.deepEqual(outcome, { kind: 'accepted', site: 'b', full: false, modelsChanged: false });
  assert.equal(s.views(20_000, FRESH_MS).find((v) => v.id === 'b')?.fresh, true);
});

test('store: reloaded pins forget unpinned sites and drop re-keyed ones, keeping the rest', () => {
  const s = store();
  s.apply(accepted(record('b', 10, [{ id: 'm' }])), 'p', 0);
  s.apply(accepted(record('c', 20, [{ id: 'n' }])), 'p', 0);
  s.setPins(
    [
      { id: 'a', publicKey: 'key-a' },
      { id: 'b', publicKey: 'key-b' },
      { id: 'd', publicKey: 'key-d' },
    ],
    'a',
  );
  assert.deepEqual(
    s.views(0, FRESH_MS).map((v) => [v.id, v.fresh]),
    [
      ['b', true],
      ['d', false],
    ],
  );
  s.setPins([{ id: 'b', publicKey: 'key-b2' }], 'a');
  assert.deepEqual(
    s.views(0, FRESH_MS).map((v) => [v.id, v.fresh, v.models.size]),
    [['b', false, 0]],
  );
  assert.equal(s.highestRevision('b'), undefined);
});

test('load score: (in flight + queued) per slot, bad figures count as 0', () => {
  const cases: [Parameters<typeof loadScore>[0], number][] = [
    [undefined, 0],
    [{ in_flight: 4, queued: 4, slots: 8 }, 1],
    [{ in_flight: 3, queued: 0, slots: 0 }, 3],
    [{ in_flight: -1, queued: Number.NaN, slots: 2 }, 0],
    [{ in_flight: 1, queued: 1, slots: 4 }, 0.5],
  ];
  for (const [load, want] of cases) assert.equal(loadScore(load), want, JSON.stringify(load));
});

test('store: pinning (or changing) a site url on reload starts that site over; the others keep theirs', () => {
  const s = store();
  s.apply(accepted(record('b', 10, [{ id: 'm' }])), 'peer-b', 1_000);
  s.apply(accepted(record('c', 10, [{ id: 'n' }])), 'peer-c', 1_000);
  s.setPins([...PINS.slice(0, 2), { id: 'c', publicKey: 'key-c', url: 'http://127.0.0.1:9/c' }], 'a');
  assert.equal(s.highestRevision('b'), 10);
  assert.equal(s.highestRevision('c'), undefined, 'c now pinned by url: what the bare key admitted proves nothing');
  s.apply(accepted(record('c', 11, [{ id: 'n' }])), 'peer-c', 2_000);
  s.setPins([...PINS.slice(0, 2), { id: 'c', publicKey: 'key-c', url: 'http://127.0.0.1:9/c' }], 'a');
  assert.equal(s.highestRevision('c'), 11, 'the same pin keeps what it learned');
});
