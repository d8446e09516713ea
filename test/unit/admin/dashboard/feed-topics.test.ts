// The live feed as every view's one source (issue 43, item 1): a client gets a snapshot of the
// topics it names and then their changes only; a topic no client shows is not read; the finished
// requests arrive per filter from each client's cursor, a burst coalesced into one bounded event;
// the tenants report arrives whole on connect, then the tenants whose counters changed, one read at
// a time; a bad topic or filter is refused by name.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '#src/core/clock.ts';
import type { FleetRow } from '#src/admin/dashboard/fleet-rows.ts';
import { NO_MESH } from '#src/admin/dashboard/site-rows.ts';
import { FEED_TICK_MS, LiveFeed, type FeedClient, type FeedSource } from '#src/admin/dashboard/live-feed.ts';
import { NO_PANELS, type FeedPanelSources } from '#src/admin/dashboard/feed-panels.ts';
import {
  FEED_REQUESTS_SHOWN,
  readSubscription,
  type FeedSubscription,
  type FeedTopic,
} from '#src/admin/dashboard/feed-subscription.ts';
import type { RecentRequests } from '#src/admin/admin-deps.ts';
import type { TenantReport, TenantsReport } from '#src/tenants/index.ts';

interface Fake extends FeedClient {
  readonly events: () => { name: string; data: any }[];
  status: number;
  body: string;
}

/** A client that drains at once and keeps every event it was sent. */
function client(): Fake {
  const chunks: string[] = [];
  const c = {
    status: 0,
    body: '',
    writableLength: 0,
    events: () =>
      chunks
        .join('')
        .split('\n\n')
        .flatMap((block) => {
          const name = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          return name === undefined || data === undefined ? [] : [{ name, data: JSON.parse(data) }];
        }),
    writeHead(status: number) {
      c.status = status;
      return c;
    },
    write(chunk: string) {
      chunks.push(chunk);
      return true;
    },
    end(chunk?: string) {
      if (chunk !== undefined) c.body += chunk;
      return c;
    },
    destroy: () => c,
    on: () => c,
  };
  return c as unknown as Fake;
}

const row = (name: string, inFlight = 0): FleetRow => ({
  name,
  state: 'healthy',
  health: 'healthy',
  discovery: 'known',
  group: null,
  kind: 'vllm',
  url: 'http://127.0.0.1:1',
  source: 'static',
  in_flight: inFlight,
  slots: null,
  queue: 0,
  last_error: null,
  last_error_at: null,
  wake: null,
  models: [],
});

function source(rows: () => FleetRow[]): FeedSource & { reads: number } {
  const s = {
    reads: 0,
    snapshot: () => ({
      now: 0,
      nodes: rows(),
      models: [],
      sites: NO_MESH,
      transitions: [],
      traffic: {},
      traffic_bucket_ms: 10_000,
      traffic_window_ms: 900_000,
    }),
    rows: () => {
      s.reads++;
      return rows();
    },
    models: () => [],
    takeTransitions: () => [{ seq: 1, at: 0, node: 'a', kind: 'health' as const, text: 'health healthy → dead' }],
    takeTraffic: () => ({}),
    sites: () => NO_MESH,
  };
  return s;
}

const only = (...topics: FeedTopic[]): FeedSubscription => ({ topics: new Set(topics), requestFilters: '' });
const names = (c: Fake): string[] => c.events().map((e) => e.name);

/** A ring of finished requests: seq and tenant, newest first from `read`, filtered by tenant, reads counted. */
function ring(): RecentRequests & { finish: (tenant: string) => void; reads: number } {
  const records: { seq: number; tenant: string }[] = [];
  const r = {
    reads: 0,
    finish: (tenant: string) => records.push({ seq: records.length + 1, tenant }),
    read(params: URLSearchParams) {
      r.reads++;
      const status = params.get('status');
      if (status !== null && !/^[1-5]xx$/.test(status)) return { error: 'status must be a class (2xx)', param: 'status' };
      const after = Number(params.get('after') ?? 0);
      const limit = Number(params.get('limit'));
      const tenant = params.get('tenant');
      const requests = records
        .filter((x) => x.seq > after && (tenant === null || x.tenant === tenant))
        .reverse()
        .slice(0, limit);
      return { answer: { requests, latest: records.length, kept: records.length, capacity: 1_000 } };
    },
  };
  return r;
}

test('a client gets a snapshot of its topics only, then their changes; a topic nobody shows is not read', () => {
  const clock = new ManualClock(10_000 * 1_000);
  let rows = [row('a')];
  const src = source(() => rows);
  const feed = new LiveFeed(clock, src);
  const asked = { tenants: 0, cluster: 0, models: 0 };
  feed.attachPanels({
    requests: ring(),
    tenants: () => {
      asked.tenants++;
      return { tenants: [], queues: {} };
    },
    modelsAdmin: () => {
      asked.models++;
      return { models: [], nodes: [] };
    },
    cluster: () => {
      asked.cluster++;
      return undefined;
    },
  });
  const fleetOnly = client();
  feed.open(fleetOnly, '127.0.0.1', only('nodes'));
  const snapshot = fleetOnly.events()[0];
  assert.equal(snapshot?.name, 'snapshot');
  assert.deepEqual(
    Object.keys(snapshot?.data).sort(),
    ['mesh', 'nodes', 'now', 'topics', 'traffic_bucket_ms', 'traffic_window_ms'],
    'no models, sites, transitions, traffic, requests, tenants or cluster in it',
  );
  rows = [row('a', 1)];
  clock.advance(FEED_TICK_MS);
  clock.advance(FEED_TICK_MS * 20);
  assert.deepEqual(
    names(fleetOnly).filter((n) => n !== 'snapshot'),
    ['nodes'],
    'the changed row, and no transitions or traffic it does not show',
  );
  assert.deepEqual(asked, { tenants: 0, cluster: 0, models: 0 }, 'nothing read for views no client shows');
  feed.close();
});

test('the finished requests: per filter from each client’s cursor, each once, a burst in one bounded event, one read per filter', () => {
  const clock = new ManualClock(10_000 * 1_000);
  const src = source(() => [row('a')]);
  const feed = new LiveFeed(clock, src);
  const requests = ring();
  feed.attachPanels({ ...NO_PANELS, requests });
  requests.finish('team-a');
  const all = [client(), client()];
  for (const c of all) feed.open(c, '127.0.0.1', only('requests'));
  const teamB = client();
  feed.open(teamB, '127.0.0.1', { topics: new Set(['requests']), requestFilters: 'tenant=team-b' });
  assert.deepEqual(
    all[0]?.events()[0]?.data.requests.records.map((r: { seq: number }) => r.seq),
    [1],
    'the snapshot holds the kept ones',
  );
  requests.finish('team-b');
  requests.finish('team-a');
  const before = requests.reads;
  clock.advance(FEED_TICK_MS);
  assert.equal(requests.reads - before, 2, 'one read per filter and cursor, shared by the clients on it');
  const fresh = (c: Fake): number[] =>
    c
      .events()
      .filter((e) => e.name === 'requests')
      .flatMap((e) => e.data.records.map((r: { seq: number }) => r.seq));
  assert.deepEqual(fresh(all[0]!), [3, 2]);
  assert.deepEqual(fresh(teamB), [2], 'only what passes its filter');
  clock.advance(FEED_TICK_MS);
  assert.deepEqual(fresh(all[1]!), [3, 2], 'nothing new: nothing sent again');

  // A burst between two ticks: one event, the newest FEED_REQUESTS_SHOWN, and the cursor past all of it.
  for (let i = 0; i < 3 * FEED_REQUESTS_SHOWN; i++) requests.finish('team-a');
  clock.advance(FEED_TICK_MS);
  const burst = all[0]!.events().filter((e) => e.name === 'requests');
  assert.equal(burst.length, 2);
  assert.equal(burst[1]?.data.records.length, FEED_REQUESTS_SHOWN);
  assert.equal(burst[1]?.data.records[0].seq, 3 + 3 * FEED_REQUESTS_SHOWN);
  assert.equal(burst[1]?.data.latest, 3 + 3 * FEED_REQUESTS_SHOWN);
  feed.close();
});

const tenant = (name: string, requests: number): TenantReport => ({
  name,
  priority: 'standard',
  weight: 1,
  keys: [],
  limits: { maxConcurrent: null, requestsPerMinute: 30, tokensPerMinute: null, tokensPerDay: null },
  inFlight: 0,
  queued: 0,
  minute: { requests, tokens: 0 },
  today: { requests, promptTokens: 0, completionTokens: 0 },
  remaining: { requests: 30 - requests, tokens: null, budget: null },
});

test('tenants: the whole report on connect, then only the tenant whose counters changed; one read at a time; a failed read said', async () => {
  const clock = new ManualClock(10_000 * 1_000);
  const feed = new LiveFeed(
    clock,
    source(() => []),
  );
  const report: { value: TenantsReport; fails: boolean } = {
    value: { tenants: [tenant('a', 0), tenant('b', 0)], queues: {} },
    fails: false,
  };
  const pending: (() => void)[] = [];
  let reads = 0;
  const panels: FeedPanelSources = {
    ...NO_PANELS,
    tenants: () => {
      reads++;
      if (report.fails) return Promise.reject(new Error('the store timed out'));
      const value = report.value;
      return new Promise((resolve) => pending.push(() => resolve(value)));
    },
  };
  feed.attachPanels(panels);
  const settle = async (): Promise<void> => {
    for (const release of pending.splice(0)) release();
    await new Promise((resolve) => setImmediate(resolve));
  };
  const c = client();
  feed.open(c, '127.0.0.1', only('tenants'));
  clock.advance(FEED_TICK_MS);
  clock.advance(FEED_TICK_MS);
  assert.equal(reads, 1, 'a read under way is not asked again');
  await settle();
  const tenantsEvents = (): any[] =>
    c
      .events()
      .filter((e) => e.name === 'tenants')
      .map((e) => e.data);
  assert.deepEqual(tenantsEvents()[0]?.order, ['a', 'b']);
  assert.equal(tenantsEvents()[0]?.full, true);
  report.value = { tenants: [tenant('a', 1), tenant('b', 0)], queues: {} };
  clock.advance(FEED_TICK_MS);
  await settle();
  const delta = tenantsEvents()[1];
  assert.deepEqual(
    delta?.changed.map((t: TenantReport) => [t.name, t.minute.requests]),
    [['a', 1]],
  );
  assert.equal(delta?.full, undefined);
  clock.advance(FEED_TICK_MS);
  await settle();
  assert.equal(tenantsEvents().length, 2, 'nothing changed: nothing sent');
  // A second page gets the whole report, the first only changes.
  const late = client();
  feed.open(late, '127.0.0.1', only('tenants'));
  await settle();
  assert.equal(late.events().find((e) => e.name === 'tenants')?.data.full, true);
  report.fails = true;
  clock.advance(FEED_TICK_MS);
  await settle();
  assert.match(tenantsEvents().at(-1)?.error, /could not be read: the store timed out/);
  feed.close();
});

test('a topic or filter the feed does not know is refused by name, before any stream', () => {
  const bad = readSubscription(new URLSearchParams('topics=nodes,polling'));
  assert.ok('error' in bad);
  assert.equal(bad.param, 'topics');
  assert.match(bad.error, /unknown feed topic 'polling'/);
  const none = readSubscription(new URLSearchParams(''));
  assert.ok('subscription' in none && none.subscription.topics.has('tenants'), 'no topics: every topic');
  const feed = new LiveFeed(
    new ManualClock(0),
    source(() => []),
  );
  feed.attachPanels({ ...NO_PANELS, requests: ring() });
  const c = client();
  const refused = feed.open(c, '127.0.0.1', { topics: new Set(['requests']), requestFilters: 'status=teapot' });
  assert.equal(refused?.param, 'status');
  assert.equal(c.status, 0, 'nothing written: the route answers 400');
  assert.equal(feed.clientCount(), 0);
});
