// GET /admin/events: one server-sent-events stream per page, the page's only source of fleet data.
// A client names the topics its open views show (feed-subscription.ts): it gets a snapshot of
// those, then per tick only what changed in them. Every client shares one tick: each topic's change
// (the node rows, models, sites, transitions, traffic, the model-management view, the cluster
// line and the batch jobs) is read only while a client shows it, serialised once and written to the clients that show
// it; the finished requests are read once per Requests filter, from each client's cursor on; the
// tenants report is read at most once at a time (feed-panels.ts). A tick coalesces whatever happened
// since the last one (FEED_TICK_MS). A client whose unsent bytes pass MAX_FEED_CLIENT_BUFFER_BYTES is dropped at once (it reconnects and
// gets a fresh snapshot) rather than buffered without limit, and so is one that stays above
// FEED_STALL_BYTES for FEED_STALL_MS; at most MAX_FEED_CLIENTS stay connected, shared between client
// addresses (feed-admission.ts).

import type { ServerResponse } from 'node:http';
import type { Clock, Timer } from '#src/core/clock.ts';
import { admitFeed, isStalled, lagSince, MAX_FEED_CLIENTS, MAX_FEEDS_PER_ADDRESS } from './feed-admission.ts';
import {
  NOTHING_SENT,
  rowsDelta,
  sitesDelta,
  sitesSent,
  sseEvent,
  type DashboardSnapshot,
  type SentRows,
  type SentSites,
} from './dashboard-state.ts';
import type { FleetRow, ModelRow } from './fleet-rows.ts';
import type { SitesPanel } from './site-rows.ts';
import type { Transition } from './transitions.ts';
import { TRAFFIC_BUCKET_MS, type TrafficSeries } from './traffic-history.ts';
import { EVERY_TOPIC, type FeedSubscription, type FeedTopic } from './feed-subscription.ts';
import {
  FeedPanels,
  NO_PANELS,
  NOTHING_SENT_TENANTS,
  tenantsDelta,
  tenantsFull,
  type FeedPanelSources,
  type RequestsEvent,
} from './feed-panels.ts';

/** What the feed needs of a response: a ServerResponse, or a test's fake. */
export type FeedClient = Pick<ServerResponse, 'writeHead' | 'write' | 'end' | 'destroy' | 'on' | 'writableLength'>;

export { FEED_STALL_BYTES, FEED_STALL_MS, MAX_FEED_CLIENTS, MAX_FEEDS_PER_ADDRESS } from './feed-admission.ts';
export const MAX_FEED_CLIENT_BUFFER_BYTES = 4 * 1024 * 1024;
export const FEED_TICK_MS = 1_000;
export const FEED_HEARTBEAT_MS = 15_000;

/** What one tick reads; the dashboard hub fills it from the registry and its own logs. */
export interface FeedSource {
  snapshot(): DashboardSnapshot;
  rows(): readonly FleetRow[];
  models(rows: readonly FleetRow[]): readonly ModelRow[];
  takeTransitions(): readonly Transition[];
  takeTraffic(): TrafficSeries;
  sites(): SitesPanel;
}

/** One connected page: its address, its subscription and where it stands. */
interface ClientState {
  readonly address: string;
  readonly subscription: FeedSubscription;
  /** Since when it lags (undefined: keeping up). */
  lagSince: number | undefined;
  /** The seq of the newest finished request it was sent (or passed over by its filters). */
  requestsAfter: number;
  /** Whether it has had the whole tenants report (its later `tenants` events are changes). */
  tenantsFull: boolean;
  /** Since its last write: a keep-alive when this reaches FEED_HEARTBEAT_MS. */
  quietMs: number;
}

/** The topics whose changes are serialised once per tick and shared (the Requests view is per filter; tenants arrive apart). */
const SHARED_TOPICS = ['nodes', 'models', 'models_admin', 'sites', 'transitions', 'traffic', 'cluster', 'batches'] as const;

/** Snapshot fields per topic (a snapshot for a client carries only its topics'). */
const SNAPSHOT_FIELDS: Readonly<Partial<Record<FeedTopic, keyof DashboardSnapshot>>> = {
  nodes: 'nodes',
  models: 'models',
  sites: 'sites',
  transitions: 'transitions',
  traffic: 'traffic',
};

export class LiveFeed {
  readonly #clock: Clock;
  readonly #source: FeedSource;
  #panels = new FeedPanels(NO_PANELS);
  /** Oldest first. */
  readonly #clients = new Map<FeedClient, ClientState>();
  #sentRows: SentRows = new Map();
  #sentModels = '';
  #sentSites: SentSites = NOTHING_SENT;
  #sentModelsAdmin = '';
  #sentCluster = '';
  #sentBatches = '';
  #sentTenants = NOTHING_SENT_TENANTS;
  #timer: Timer | undefined;
  #dropped = 0;
  #replaced = 0;
  #sentBucket = 0;

  constructor(clock: Clock, source: FeedSource) {
    this.#clock = clock;
    this.#source = source;
  }

  /** The views the admin table reads besides the hub's (the requests, tenants, model management, cluster line). */
  attachPanels(sources: FeedPanelSources): void {
    this.#panels = new FeedPanels(sources);
  }

  /**
   * Answers 503 when `address` holds its share of the feed already; else streams (perhaps in place
   * of a feed of the busiest address) until the client leaves, stops reading, or `close()`. A
   * Requests filter the request ring refuses is returned unanswered (the route answers 400).
   */
  open(
    res: FeedClient,
    address: string,
    subscription: FeedSubscription = EVERY_TOPIC,
  ): { readonly error: string; readonly param: string } | undefined {
    const wants = (topic: FeedTopic): boolean => subscription.topics.has(topic);
    const requests = wants('requests') ? this.#panels.requests(subscription, 0) : undefined;
    if (requests !== undefined && 'error' in requests) return requests;
    const entries = [...this.#clients];
    const admission = admitFeed(
      entries.map(([, state]) => state),
      address,
    );
    if (admission.kind === 'refuse') {
      res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8', 'retry-after': '5' });
      res.end(`${admission.reason}\n`);
      return undefined;
    }
    if (admission.kind === 'admit_replacing') {
      const victim = entries[admission.victim]?.[0];
      if (victim !== undefined) {
        this.#clients.delete(victim);
        this.#replaced++;
        // An SSE comment: the page reconnects by itself, and anyone reading the stream sees why it ended.
        victim.end(
          `: closed to make room for a client address holding fewer live feeds (at most ${MAX_FEEDS_PER_ADDRESS} per address, ${MAX_FEED_CLIENTS} in all)\n\n`,
        );
      }
    }
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
    });
    const others = new Set<FeedTopic>();
    for (const client of this.#clients.values()) for (const topic of client.subscription.topics) others.add(topic);
    const alone = (topic: FeedTopic): boolean => wants(topic) && !others.has(topic);
    const state: ClientState = {
      address,
      subscription,
      lagSince: undefined,
      requestsAfter: requests?.latest ?? 0,
      tenantsFull: false,
      quietMs: 0,
    };
    this.#clients.set(res, state);
    res.on('close', () => this.#clients.delete(res));
    const whole = this.#source.snapshot();
    const snapshot: Record<string, unknown> = { ...whole };
    for (const [topic, field] of Object.entries(SNAPSHOT_FIELDS)) if (!wants(topic as FeedTopic)) delete snapshot[field];
    // Its only reader: later ticks send what changed since this snapshot, not the whole of it.
    if (alone('nodes')) this.#sentRows = new Map(whole.nodes.map((row) => [row.name, JSON.stringify(row)]));
    if (alone('models')) this.#sentModels = JSON.stringify(whole.models);
    if (alone('sites')) this.#sentSites = sitesSent(whole.sites);
    // The Models view says "mesh" beside a remote model, the Sites view aside: one flag, always.
    snapshot.mesh = whole.sites.mesh;
    snapshot.topics = [...subscription.topics];
    if (requests !== undefined) snapshot.requests = requests;
    if (wants('models_admin')) {
      snapshot.models_admin = this.#panels.modelsAdmin();
      if (alone('models_admin')) this.#sentModelsAdmin = JSON.stringify(snapshot.models_admin);
    }
    if (wants('cluster')) {
      snapshot.cluster = this.#panels.cluster();
      if (alone('cluster')) this.#sentCluster = JSON.stringify(snapshot.cluster);
    }
    if (wants('batches')) {
      snapshot.batches = this.#panels.batches();
      if (alone('batches')) this.#sentBatches = JSON.stringify(snapshot.batches);
    }
    this.#write(res, `retry: 2000\n${sseEvent('snapshot', snapshot)}`);
    if (wants('tenants')) this.#readTenants();
    this.#timer ??= this.#clock.setTimeout(() => this.#tick(), FEED_TICK_MS);
    return undefined;
  }

  clientCount(): number {
    return this.#clients.size;
  }

  /** Clients dropped for reading too slowly (or not at all). */
  droppedClients(): number {
    return this.#dropped;
  }

  /** Feeds closed to give their slot to a client address holding fewer. */
  replacedClients(): number {
    return this.#replaced;
  }

  /** Ends every stream (the gateway is stopping: they must not hold the drain). */
  close(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
    for (const res of this.#clients.keys()) res.end();
    this.#clients.clear();
  }

  #tick(): void {
    this.#timer = undefined;
    const transitions = this.#source.takeTransitions();
    const traffic = this.#source.takeTraffic();
    const shown = new Set<FeedTopic>();
    for (const state of this.#clients.values()) for (const topic of state.subscription.topics) shown.add(topic);
    const now = this.#clock.now();
    const chunks = this.#sharedChunks(shown, transitions, traffic, now);
    if (shown.has('tenants')) this.#readTenants();
    // Clients with one Requests filter at one cursor share one read.
    const reads = new Map<string, RequestsEvent | undefined>();
    for (const [res, state] of [...this.#clients]) {
      let chunk = '';
      for (const topic of SHARED_TOPICS) if (state.subscription.topics.has(topic)) chunk += chunks.get(topic) ?? '';
      if (state.subscription.topics.has('requests')) chunk += this.#requestsChunk(state, reads);
      state.quietMs += FEED_TICK_MS;
      if (chunk === '' && state.quietMs >= FEED_HEARTBEAT_MS) chunk = ': keep-alive\n\n';
      if (chunk !== '') this.#write(res, chunk);
    }
    this.#dropStalled(now);
    if (this.#clients.size > 0) this.#timer = this.#clock.setTimeout(() => this.#tick(), FEED_TICK_MS);
  }

  /** Per shared topic some client shows, its event when it changed; what was sent of a topic nobody shows is forgotten. */
  #sharedChunks(
    shown: ReadonlySet<FeedTopic>,
    transitions: readonly Transition[],
    traffic: TrafficSeries,
    now: number,
  ): Map<FeedTopic, string> {
    const chunks = new Map<FeedTopic, string>();
    const rows = shown.has('nodes') || shown.has('models') ? this.#source.rows() : [];
    if (shown.has('nodes')) {
      const { delta, sent } = rowsDelta(rows, this.#sentRows);
      this.#sentRows = sent;
      if (delta !== undefined) chunks.set('nodes', sseEvent('nodes', delta));
    } else this.#sentRows = new Map();
    if (shown.has('models')) {
      const models: readonly ModelRow[] = this.#source.models(rows);
      const text = JSON.stringify(models);
      if (text !== this.#sentModels) chunks.set('models', sseEvent('models', models));
      this.#sentModels = text;
    } else this.#sentModels = '';
    if (shown.has('sites')) {
      const sites = sitesDelta(this.#source.sites(), this.#sentSites);
      this.#sentSites = sites.sent;
      // `now` travels with it: the page shows the sites' record ages against the gateway's clock.
      if (sites.delta !== undefined) chunks.set('sites', sseEvent('sites', { now, ...sites.delta }));
    } else this.#sentSites = NOTHING_SENT;
    if (transitions.length > 0) chunks.set('transitions', sseEvent('transitions', transitions));
    // Each new bucket's start is sent even when nothing happened, so the charts' window slides on.
    const bucket = Math.floor(now / TRAFFIC_BUCKET_MS);
    if (Object.keys(traffic).length > 0 || bucket !== this.#sentBucket)
      chunks.set('traffic', sseEvent('traffic', { now, series: traffic }));
    this.#sentBucket = bucket;
    this.#sentModelsAdmin = this.#changed(chunks, shown, 'models_admin', this.#sentModelsAdmin, () => this.#panels.modelsAdmin());
    this.#sentCluster = this.#changed(chunks, shown, 'cluster', this.#sentCluster, () => this.#panels.cluster());
    this.#sentBatches = this.#changed(chunks, shown, 'batches', this.#sentBatches, () => this.#panels.batches());
    return chunks;
  }

  /** A whole-value topic: its event when its JSON differs from what was sent; the text sent now. */
  #changed(
    chunks: Map<FeedTopic, string>,
    shown: ReadonlySet<FeedTopic>,
    topic: FeedTopic,
    sent: string,
    read: () => unknown,
  ): string {
    if (!shown.has(topic)) return '';
    const value = read();
    const text = JSON.stringify(value);
    if (text !== sent) chunks.set(topic, sseEvent(topic, value));
    return text;
  }

  /** The client's finished requests since its cursor (at most FEED_REQUESTS_SHOWN, the newest), as one event. */
  #requestsChunk(state: ClientState, reads: Map<string, RequestsEvent | undefined>): string {
    const key = `${state.subscription.requestFilters}|${state.requestsAfter}`;
    if (!reads.has(key)) {
      const read = this.#panels.requests(state.subscription, state.requestsAfter);
      reads.set(key, 'error' in read ? undefined : read);
    }
    const read = reads.get(key);
    if (read === undefined) return '';
    state.requestsAfter = read.latest;
    return read.records.length === 0 ? '' : sseEvent('requests', read);
  }

  /** Reads the tenants report (one read at a time) and writes it: whole to a client that has not had it, else what changed. */
  #readTenants(): void {
    this.#panels.readTenants((report) => {
      const viewers = [...this.#clients].filter(([, state]) => state.subscription.topics.has('tenants'));
      if (viewers.length === 0) {
        this.#sentTenants = NOTHING_SENT_TENANTS;
        return;
      }
      if ('error' in report) {
        for (const [res, state] of viewers) {
          state.tenantsFull = false;
          this.#write(res, sseEvent('tenants', { changed: [], removed: [], error: report.error }));
        }
        this.#sentTenants = NOTHING_SENT_TENANTS;
        return;
      }
      const { event, sent } = tenantsDelta(report, this.#sentTenants);
      this.#sentTenants = sent;
      const full = viewers.some(([, state]) => !state.tenantsFull) ? sseEvent('tenants', tenantsFull(report)) : '';
      const delta = event === undefined ? '' : sseEvent('tenants', event);
      for (const [res, state] of viewers) {
        const chunk = state.tenantsFull ? delta : full;
        state.tenantsFull = true;
        if (chunk !== '') this.#write(res, chunk);
      }
    });
  }

  #write(res: FeedClient, chunk: string): void {
    const state = this.#clients.get(res);
    if (state !== undefined) state.quietMs = 0;
    res.write(chunk);
    if (res.writableLength > MAX_FEED_CLIENT_BUFFER_BYTES) this.#drop(res);
  }

  /** Each tick, heartbeat or not: a client that has not drained for FEED_STALL_MS is dropped. */
  #dropStalled(now: number): void {
    for (const [res, state] of [...this.#clients]) {
      state.lagSince = lagSince(state.lagSince, res.writableLength, now);
      if (isStalled(state.lagSince, now)) this.#drop(res);
    }
  }

  #drop(res: FeedClient): void {
    if (!this.#clients.delete(res)) return;
    this.#dropped++;
    res.destroy();
  }
}
