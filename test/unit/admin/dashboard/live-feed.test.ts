import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '#src/core/clock.ts';
import { rowsDelta, sseEvent } from '#src/admin/dashboard/dashboard-state.ts';
import type { FleetRow } from '#src/admin/dashboard/fleet-rows.ts';
import { NO_MESH, type SiteRow, type SitesPanel } from '#src/admin/dashboard/site-rows.ts';
import {
  FEED_HEARTBEAT_MS,
  FEED_STALL_BYTES,
  FEED_STALL_MS,
  FEED_TICK_MS,
  LiveFeed,
  MAX_FEED_CLIENT_BUFFER_BYTES,
  MAX_FEED_CLIENTS,
  MAX_FEEDS_PER_ADDRESS,
  type FeedClient,
  type FeedSource,
} from '#src/admin/dashboard/live-feed.ts';
import {
  discoveryTransition,
  healthTransition,
  reloadTransition,
  wakeTransition,
  type Transition,
} from '#src/admin/dashboard/transitions.ts';
import type { DiscoveryState } from '#src/discovery/index.ts';
import type { HealthState } from '#src/nodes/index.ts';
import { model } from '#test/fixtures/builders.ts';

const row = (name: string, state: FleetRow['state'] = 'healthy'): FleetRow => ({
  name,
  state,
  health: state,
  discovery: 'known',
  group: null,
  kind: 'vllm',
  url: 'http://127.0.0.1:1',
  source: 'static',
  in_flight: 0,
  slots: null,
  queue: 0,
  last_error: null,
  last_error_at: null,
  wake: null,
  models: [],
});

test('rowsDelta sends the rows that changed, the ones removed, and the order when membership changed', () => {
  const first = rowsDelta([row('a'), row('b')], new Map());
  assert.deepEqual(
    first.delta?.changed.map((r) => r.name),
    ['a', 'b'],
  );
  assert.deepEqual(first.delta?.order, ['a', 'b']);
  assert.equal(rowsDelta([row('a'), row('b')], first.sent).delta, undefined, 'nothing changed: nothing sent');
  const flipped = rowsDelta([row('a'), row('b', 'dead')], first.sent);
  assert.deepEqual(flipped.delta, { changed: [row('b', 'dead')], removed: [] });
  const removed = rowsDelta([row('a')], first.sent);
  assert.deepEqual(removed.delta, { changed: [], removed: ['b'], order: ['a'] });
});

test('an SSE event is one event line and one data line', () => {
  assert.equal(sseEvent('nodes', { a: 'x\ny' }), 'event: nodes\ndata: {"a":"x\\ny"}\n\n');
});

const health = (status: HealthState['status'], lastError?: string): HealthState => ({
  status,
  fails: 0,
  lastError,
  lastProbeAt: 0,
  changedAt: 0,
});
const listing = (phase: DiscoveryState['phase'], ids: string[], lastError?: string): DiscoveryState => ({
  phase,
  models: ids.map((id) => model(id)),
  fails: 0,
  empties: 0,
  lastError,
  lastSuccessAt: undefined,
  dropped: [],
  changedAt: 0,
});

test('transitions: only changes an operator sees, each as one line', () => {
  assert.equal(healthTransition({ node: 'a', from: health('healthy'), to: health('healthy') }), undefined);
  assert.deepEqual(healthTransition({ node: 'a', from: health('healthy'), to: health('dead', 'timeout') }), {
    node: 'a',
    kind: 'health',
    text: 'health healthy → dead (timeout)',
  });
  const ok = { ok: true, models: [] } as const;
  assert.equal(
    discoveryTransition({ node: 'a', result: ok, from: listing('known', ['x']), to: listing('known', ['x']) }),
    undefined,
  );
  assert.deepEqual(
    discoveryTransition({ node: 'a', result: ok, from: listing('known', ['x']), to: listing('known', ['x', 'y', 'z']) })?.text,
    'listing known → known, +2 models',
  );
  assert.equal(wakeTransition({ node: 'a', result: 'in_window', reason: 'request' }), undefined);
  assert.equal(wakeTransition({ node: 'a', result: 'sent', reason: 'request' })?.text, 'wake sent (request)');
  assert.equal(
    reloadTransition({ ok: false, problems: [{ path: 'nodes[0].url', message: 'bad' }] }).text,
    'config reload rejected: nodes[0].url: bad',
  );
});

/** A response that records what is written and never drains (its buffer only grows). */
function fakeClient(): FeedClient & { text: () => string; destroyed: boolean; status: number; close: () => void } {
  const chunks: string[] = [];
  const onClose: (() => void)[] = [];
  const client = {
    status: 0,
    destroyed: false,
    writableLength: 0,
    text: () => chunks.join(''),
    close: () => onClose.forEach((f) => f()),
    writeHead(status: number) {
      client.status = status;
      return client;
    },
    write(chunk: string) {
      chunks.push(chunk);
      client.writableLength += Buffer.byteLength(chunk);
      return false;
    },
    end(chunk?: string) {
      if (chunk !== undefined) chunks.push(chunk);
      return client;
    },
    destroy() {
      client.destroyed = true;
      client.close();
      return client;
    },
    on(event: string, listener: () => void) {
      if (event === 'close') onClose.push(listener);
      return client;
    },
  };
  return client as unknown as FeedClient & { text: () => string; destroyed: boolean; status: number; close: () => void };
}

function source(rows: () => FleetRow[], big = ''): FeedSource & { transitions: Transition[] } {
  const s = {
    transitions: [] as Transition[],
    snapshot: () => ({
      now: 0,
      nodes: rows(),
      models: [],
      sites: NO_MESH,
      transitions: [],
      traffic: {},
      traffic_bucket_ms: 10_000,
      traffic_window_ms: 900_000,
      padding: big,
    }),
    rows,
    models: () => [],
    takeTransitions: () => s.transitions.splice(0),
    takeTraffic: () => ({}),
    sites: () => NO_MESH,
  };
  return s;
}

test('the feed: a snapshot first, then only what changed each tick, and a keep-alive when quiet', () => {
  const clock = new ManualClock(10_000 * 1_000);
  let rows = [row('a'), row('b')];
  const src = source(() => rows);
  const feed = new LiveFeed(clock, src);
  const client = fakeClient();
  feed.open(client, '127.0.0.1');
  assert.equal(client.status, 200);
  assert.match(client.text(), /^retry: 2000\nevent: snapshot\ndata: /);
  rows = [row('a'), row('b', 'dead')];
  src.transitions.push({ seq: 1, at: 0, node: 'b', kind: 'health', text: 'health healthy → dead' });
  const before = client.text().length;
  clock.advance(FEED_TICK_MS);
  const tick = client.text().slice(before);
  assert.match(tick, /event: nodes\ndata: \{"changed":\[\{"name":"b","state":"dead"/);
  assert.doesNotMatch(tick, /"name":"a"/);
  assert.match(tick, /event: transitions\n/);
  // Quiet: the stream still carries something at least every FEED_HEARTBEAT_MS (a keep-alive, or
  // the start of a new traffic bucket), and no node rows.
  const quiet = client.text().length;
  let sinceWrite = 0;
  let longestGap = 0;
  for (let t = 0; t < 4 * FEED_HEARTBEAT_MS; t += FEED_TICK_MS) {
    const length = client.text().length;
    clock.advance(FEED_TICK_MS);
    sinceWrite = client.text().length > length ? 0 : sinceWrite + FEED_TICK_MS;
    longestGap = Math.max(longestGap, sinceWrite);
  }
  assert.ok(longestGap < FEED_HEARTBEAT_MS, `silent for ${longestGap} ms`);
  assert.doesNotMatch(client.text().slice(quiet), /event: nodes/);
  feed.close();
  assert.equal(feed.clientCount(), 0);
});

test('the feed drops a client that does not read, and refuses clients past MAX_FEED_CLIENTS', () => {
  const clock = new ManualClock(10_000 * 1_000);
  let n = 0;
  // Every tick every row changes, so a client that never drains falls behind by a row set per tick.
  const src = source(() => Array.from({ length: 200 }, (_, i) => ({ ...row(`node-${i}`), last_error: `changed ${n}` })));
  const feed = new LiveFeed(clock, src);
  const slow = fakeClient();
  feed.open(slow, '127.0.0.1');
  for (let i = 0; i < 1_000 && !slow.destroyed; i++) {
    n++;
    clock.advance(FEED_TICK_MS);
  }
  assert.ok(slow.destroyed, 'the slow client was dropped');
  assert.ok(slow.writableLength <= MAX_FEED_CLIENT_BUFFER_BYTES + 200 * 1_000, `it held ${slow.writableLength} bytes`);
  assert.equal(feed.droppedClients(), 1);
  assert.equal(feed.clientCount(), 0);

  const clients = Array.from({ length: MAX_FEED_CLIENTS }, () => fakeClient());
  // Spread over enough addresses that none holds more than its share.
  clients.forEach((c, i) => feed.open(c, `10.0.0.${i % (MAX_FEED_CLIENTS / MAX_FEEDS_PER_ADDRESS)}`));
  const extra = fakeClient();
  feed.open(extra, '10.0.0.1');
  assert.equal(extra.status, 503);
  assert.equal(feed.clientCount(), MAX_FEED_CLIENTS);
  feed.close();
});

test('the feed sends a sites event only when a site row or this site’s own changed, with the gateway’s clock', () => {
  const clock = new ManualClock(10_000 * 1_000);
  const siteRow = (state: 'fresh' | 'stale'): SiteRow => ({
    id: 'b',
    state,
    url: 'http://127.0.0.1:1/b',
    revision: 5,
    record_at: 1,
    models: 2,
    load: null,
    unreachable: null,
    last_rejection: null,
    last_trust_failure: null,
  });
  let panel: SitesPanel = NO_MESH;
  const src = { ...source(() => [row('a')]), sites: () => panel };
  const feed = new LiveFeed(clock, src);
  const client = fakeClient();
  feed.open(client, '127.0.0.1');
  const sitesEvents = (): string[] =>
    client
      .text()
      .split('\n\n')
      .filter((e) => e.startsWith('event: sites'));
  clock.advance(FEED_TICK_MS);
  assert.equal(sitesEvents().length, 0, 'alone and unchanged: nothing');
  panel = {
    mesh: true,
    own: { id: 'a', url: 'http://127.0.0.1:1/a', revision: 1, models: [], published_at: null, peers: 1 },
    sites: [siteRow('fresh')],
  };
  clock.advance(FEED_TICK_MS);
  clock.advance(FEED_TICK_MS);
  assert.equal(sitesEvents().length, 1, 'the mesh started: one event, then nothing while nothing changes');
  const first = JSON.parse(sitesEvents()[0]?.split('data: ')[1] ?? '{}') as { now: number; mesh: boolean; order: string[] };
  assert.deepEqual([first.mesh, first.order, first.now], [true, ['b'], clock.now() - FEED_TICK_MS]);
  panel = { ...panel, sites: [siteRow('stale')] };
  clock.advance(FEED_TICK_MS);
  assert.match(sitesEvents()[1] ?? '', /"changed":\[\{"id":"b","state":"stale"/);
  feed.close();
});

test('the feed drops a client whose unsent bytes stay above FEED_STALL_BYTES for FEED_STALL_MS, even when quiet', () => {
  const clock = new ManualClock(10_000 * 1_000);
  const feed = new LiveFeed(
    clock,
    source(() => [row('a')]),
  );
  const stuck = fakeClient();
  const reader = fakeClient();
  feed.open(stuck, '127.0.0.1');
  feed.open(reader, '127.0.0.2');
  // The kernel's buffers are full: what the feed writes stays unsent.
  Object.assign(stuck, { writableLength: FEED_STALL_BYTES + 1 });
  let waited = 0;
  while (!stuck.destroyed && waited <= 2 * FEED_STALL_MS) {
    Object.assign(reader, { writableLength: 0 });
    clock.advance(FEED_TICK_MS);
    waited += FEED_TICK_MS;
  }
  assert.ok(stuck.destroyed, 'the stuck client was dropped');
  assert.ok(waited >= FEED_STALL_MS && waited <= FEED_STALL_MS + 2 * FEED_TICK_MS, `after ${waited} ms`);
  assert.equal(reader.destroyed, false, 'a client that drains stays');
  assert.equal(feed.clientCount(), 1);
  assert.equal(feed.droppedClients(), 1);
  feed.close();
});

test('a full feed gives a newcomer from another address the oldest slot of the busiest address, and says why', () => {
  const clock = new ManualClock(10_000 * 1_000);
  const feed = new LiveFeed(
    clock,
    source(() => [row('a')]),
  );
  const clients = Array.from({ length: MAX_FEED_CLIENTS }, () => fakeClient());
  clients.forEach((c, i) => feed.open(c, `10.0.0.${i % (MAX_FEED_CLIENTS / MAX_FEEDS_PER_ADDRESS)}`));
  const operator = fakeClient();
  feed.open(operator, '192.0.2.1');
  assert.equal(operator.status, 200);
  assert.equal(feed.clientCount(), MAX_FEED_CLIENTS);
  assert.equal(feed.replacedClients(), 1);
  assert.match(clients[0]?.text() ?? '', /: closed to make room for a client address holding fewer live feeds/);
  feed.close();
});
