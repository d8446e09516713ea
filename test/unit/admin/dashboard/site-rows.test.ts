import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '#src/core/clock.ts';
import { EventBus } from '#src/core/events.ts';
import type { MeshEvents, OwnSiteRow, SiteAdminRow } from '#src/mesh/index.ts';
import type { ProxyEvents } from '#src/proxy/index.ts';
import type { RegistryEvents } from '#src/nodes/index.ts';
import type { SitesSource } from '#src/core/site-rows.ts';
import { NOTHING_SENT, sitesDelta, sitesSent } from '#src/admin/dashboard/dashboard-state.ts';
import { DashboardHub } from '#src/admin/dashboard/dashboard-hub.ts';
import {
  NO_MESH,
  remoteModelsOf,
  setBounded,
  siteRow,
  sitesPanel,
  type SiteMemory,
  type SitesPanel,
} from '#src/admin/dashboard/site-rows.ts';
import { freshnessTransition, reachabilityTransition, rejectionTransition } from '#src/admin/dashboard/transitions.ts';

const NOW = 1_700_000_000_000;
const EMPTY: SiteMemory = { acceptedAt: new Map(), rejectedAt: new Map(), unreachable: new Map() };

const admin = (id: string, extra: Partial<SiteAdminRow> = {}): SiteAdminRow => ({
  id,
  fresh: true,
  url: `http://127.0.0.1:1/${id}`,
  revision: 7,
  age_ms: 1_500,
  models: [{ id: 'm', ctx: 8192 }],
  load: { in_flight: 1, queued: 2, slots: 4 },
  load_score: 0.75,
  last_rejection: undefined,
  last_trust_failure: undefined,
  ...extra,
});

const own: OwnSiteRow = {
  id: 'here',
  url: 'http://127.0.0.1:1/here',
  revision: 3,
  models: [{ id: 'local' }],
  published_at: '2023-11-14T22:13:20.000Z',
  peers: 2,
};
const sourceOf = (rows: () => readonly SiteAdminRow[]): SitesSource => ({ own: () => own, remote: rows });

test('a site row: state word, revision, models count, load; instants from what the hub heard, else from the age', () => {
  const memory: SiteMemory = {
    acceptedAt: new Map([['b', NOW - 1_234]]),
    rejectedAt: new Map([['b', NOW - 9_000]]),
    unreachable: new Map([['b', { detail: 'connect ECONNREFUSED', since: NOW - 500 }]]),
  };
  const rejection = {
    reason: 'bad_signature' as const,
    class: 'trust' as const,
    detail: 'not signed by the pinned key',
    peer: 'peer-x',
    age_ms: 9_100,
  };
  const shown = {
    reason: 'bad_signature',
    class: 'trust',
    detail: 'not signed by the pinned key',
    peer: 'peer-x',
    at: NOW - 9_000,
  };
  assert.deepEqual(siteRow(admin('b', { last_rejection: rejection, last_trust_failure: rejection }), memory, NOW), {
    id: 'b',
    state: 'fresh',
    url: 'http://127.0.0.1:1/b',
    revision: 7,
    record_at: NOW - 1_234,
    models: 1,
    load: { in_flight: 1, queued: 2, slots: 4 },
    unreachable: { detail: 'connect ECONNREFUSED', since: NOW - 500 },
    last_rejection: shown,
    last_trust_failure: shown,
  });
  // Heard before the hub listened: whole seconds of the age, so the row stays put from tick to tick.
  const fromAge = siteRow(admin('c', { fresh: false, last_rejection: rejection }), EMPTY, NOW + 400);
  assert.equal(fromAge.state, 'stale');
  assert.equal(fromAge.record_at, Math.floor((NOW + 400 - 1_500) / 1000) * 1000);
  const later = siteRow(admin('c', { fresh: false, age_ms: 1_500 + 300.4, last_rejection: rejection }), EMPTY, NOW + 700);
  assert.equal(later.record_at, fromAge.record_at, 'the age grew with the clock (sub-ms jitter included)');
  assert.equal(fromAge.last_rejection?.at, Math.floor((NOW + 400 - 9_100) / 1000) * 1000);
  assert.equal(fromAge.unreachable, null);
  const never = siteRow(
    admin('d', { fresh: false, url: undefined, revision: undefined, age_ms: undefined, models: [], load: undefined }),
    EMPTY,
    NOW,
  );
  assert.deepEqual([never.url, never.revision, never.record_at, never.models, never.load], [null, null, null, 0, null]);
});

test('the sites panel: alone = no mesh; with [mesh] every pinned site sorted by id and this site’s own set', () => {
  assert.deepEqual(sitesPanel(undefined, EMPTY, NOW), NO_MESH);
  const panel = sitesPanel(
    sourceOf(() => [admin('c'), admin('b')]),
    EMPTY,
    NOW,
  );
  assert.equal(panel.mesh, true);
  assert.deepEqual(
    panel.sites.map((s) => s.id),
    ['b', 'c'],
  );
  assert.deepEqual(panel.own, {
    id: 'here',
    url: 'http://127.0.0.1:1/here',
    revision: 3,
    models: [{ id: 'local' }],
    published_at: '2023-11-14T22:13:20.000Z',
    peers: 2,
  });
});

test('the sites delta: nothing when nothing changed; the changed rows only; own and mesh with every change', () => {
  const panel = (rows: SiteAdminRow[]): SitesPanel =>
    sitesPanel(
      sourceOf(() => rows),
      EMPTY,
      NOW,
    );
  const first = sitesDelta(panel([admin('b'), admin('c')]), NOTHING_SENT);
  assert.deepEqual(first.delta?.order, ['b', 'c']);
  assert.equal(first.delta?.mesh, true);
  assert.equal(sitesDelta(panel([admin('b'), admin('c')]), first.sent).delta, undefined);
  assert.equal(
    sitesDelta(panel([admin('b'), admin('c')]), sitesSent(panel([admin('b'), admin('c')]))).delta,
    undefined,
    'a snapshot counts as sent',
  );
  const stale = sitesDelta(panel([admin('b'), admin('c', { fresh: false })]), first.sent).delta;
  assert.deepEqual(
    stale?.changed.map((s) => [s.id, s.state]),
    [['c', 'stale']],
  );
  assert.deepEqual(stale?.removed, []);
  assert.equal(stale?.order, undefined);
  const unpinned = sitesDelta(panel([admin('b')]), first.sent).delta;
  assert.deepEqual([unpinned?.changed, unpinned?.removed, unpinned?.order], [[], ['c'], ['b']]);
  const started = sitesDelta(panel([]), sitesSent(NO_MESH)).delta;
  assert.deepEqual([started?.mesh, started?.own?.id], [true, 'here'], 'the mesh starting after the page connected');
});

test('site transitions: freshness both ways, reachability both ways, a rejection when logged and from a known author', () => {
  assert.deepEqual(freshnessTransition({ site: 'b', fresh: false }), {
    node: '',
    site: 'b',
    kind: 'freshness',
    text: 'fresh → stale (no newer record within [mesh] freshness: its models are not routed to)',
  });
  assert.equal(freshnessTransition({ site: 'b', fresh: true }).text, 'stale → fresh (a newer record arrived)');
  assert.equal(
    reachabilityTransition({ site: 'b', reachable: false, detail: 'connect ECONNREFUSED' }).text,
    'unreachable (connect ECONNREFUSED): forwards skip it while it backs off',
  );
  assert.deepEqual(reachabilityTransition({ site: 'b', reachable: true, detail: undefined }), {
    node: '',
    site: 'b',
    kind: 'reachability',
    text: 'reachable again (a forward got an answer)',
  });
  const rejected = {
    reason: 'replay' as const,
    site: 'b',
    peer: 'peer-r',
    detail: 'revision 3 <= 9',
    suppressed: 0,
    knownAuthor: true,
  };
  assert.equal(rejectionTransition({ ...rejected, log: false }), undefined);
  assert.deepEqual(rejectionTransition({ ...rejected, log: true }), {
    node: '',
    site: 'b',
    kind: 'rejection',
    text: 'record from peer peer-r rejected: replay (revision 3 <= 9)',
  });
  assert.equal(rejectionTransition({ ...rejected, site: undefined, log: true })?.site, undefined, 'a message naming no site');
  assert.equal(
    rejectionTransition({ ...rejected, log: true, knownAuthor: false }),
    undefined,
    'an author that is no pinned site nor admitted peer only counts',
  );
});

test('setBounded keeps the newest `limit` keys', () => {
  const map = new Map<string, number>();
  for (let i = 0; i < 5; i++) setBounded(map, `s${i}`, i, 3);
  setBounded(map, 's2', 20, 3);
  assert.deepEqual(
    [...map],
    [
      ['s3', 3],
      ['s4', 4],
      ['s2', 20],
    ],
  );
});

test('the hub: mesh and forwarding events become transitions and site facts; the panel follows the mesh source', () => {
  const clock = new ManualClock(NOW);
  const meshEvents = new EventBus<MeshEvents>();
  const proxyEvents = new EventBus<ProxyEvents>();
  let running: SitesSource | undefined;
  let rows = [admin('b', { age_ms: 0 })];
  const hub = new DashboardHub({
    clock,
    registryEvents: new EventBus<RegistryEvents>(),
    proxyEvents,
    registry: { snapshot: () => ({ nodes: [], inFlight: () => 0, usage: () => ({ requests: 0, tokens: 0 }), now: clock.now() }) },
    queueDepths: () => ({}),
    aliases: () => new Map(),
    mesh: { events: meshEvents, sites: () => running },
  });
  assert.deepEqual(hub.snapshot().sites, NO_MESH, 'before the mesh starts');
  running = sourceOf(() => rows);
  meshEvents.emit('mesh:record-accepted', { site: 'b', revision: 7, full: true, modelsChanged: true });
  meshEvents.emit('mesh:site-freshness', { site: 'b', fresh: true });
  clock.advance(2_000);
  proxyEvents.emit('mesh:site-reachability', { site: 'b', reachable: false, detail: 'connect ECONNREFUSED' });
  for (const log of [true, false])
    meshEvents.emit('mesh:record-rejected', {
      reason: 'replay',
      site: 'b',
      peer: 'p',
      detail: 'old',
      log,
      suppressed: 0,
      knownAuthor: true,
    });
  const snap = hub.snapshot();
  assert.deepEqual(
    snap.transitions.map((t) => [t.kind, t.site]),
    [
      ['freshness', 'b'],
      ['reachability', 'b'],
      ['rejection', 'b'],
    ],
  );
  const b = snap.sites.sites[0];
  assert.equal(b?.record_at, NOW);
  assert.deepEqual(b?.unreachable, { detail: 'connect ECONNREFUSED', since: NOW + 2_000 });
  assert.deepEqual(
    snap.models.map((m) => [m.id, m.sites.map((s) => s.site)]),
    [['m', ['b']]],
    'a model only b serves',
  );
  rows = [admin('b', { fresh: false })];
  assert.deepEqual(
    hub.snapshot().models.map((m) => [m.id, m.sites, m.stale_sites]),
    [['m', [], ['b']]],
    'stale: named, not serving',
  );
  proxyEvents.emit('mesh:site-reachability', { site: 'b', reachable: true, detail: undefined });
  assert.equal(hub.sites().sites[0]?.unreachable, null);
  hub.close();
  meshEvents.emit('mesh:site-freshness', { site: 'b', fresh: false });
  assert.equal(hub.snapshot().transitions.length, 4, 'closed: no longer listening');
});

test("the Models view's remote models carry only the documented fields of a record's models", () => {
  const loose = { id: 'm', ctx: 8192, on_demand: true, banner: '<img src=x>' };
  const rows = remoteModelsOf(sourceOf(() => [admin('b', { models: [loose] })]));
  assert.deepEqual(rows, [{ site: 'b', fresh: true, models: [{ id: 'm', ctx: 8192, on_demand: true }] }]);
});
