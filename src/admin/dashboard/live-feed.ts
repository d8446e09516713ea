// GET /admin/events: one server-sent-events stream per page. Every client shares one tick: the
// rows, models, sites, transitions and traffic that changed are serialised once and written to all. A
// client whose unsent bytes pass MAX_FEED_CLIENT_BUFFER_BYTES is dropped at once (it reconnects and
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

export class LiveFeed {
  readonly #clock: Clock;
  readonly #source: FeedSource;
  /** Oldest first: each client's address, and since when it lags (undefined: keeping up). */
  readonly #clients = new Map<FeedClient, { readonly address: string; lagSince: number | undefined }>();
  #sentRows: SentRows = new Map();
  #sentModels = '';
  #sentSites: SentSites = NOTHING_SENT;
  #timer: Timer | undefined;
  #sinceHeartbeatMs = 0;
  #dropped = 0;
  #replaced = 0;
  #sentBucket = 0;

  constructor(clock: Clock, source: FeedSource) {
    this.#clock = clock;
    this.#source = source;
  }

  /**
   * Answers 503 when `address` holds its share of the feed already; else streams (perhaps in place
   * of a feed of the busiest address) until the client leaves, stops reading, or `close()`.
   */
  open(res: FeedClient, address: string): void {
    const entries = [...this.#clients];
    const admission = admitFeed(
      entries.map(([, state]) => state),
      address,
    );
    if (admission.kind === 'refuse') {
      res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8', 'retry-after': '5' });
      res.end(`${admission.reason}\n`);
      return;
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
    this.#clients.set(res, { address, lagSince: undefined });
    res.on('close', () => this.#clients.delete(res));
    const snapshot = this.#source.snapshot();
    if (this.#clients.size === 1) {
      // The first client: later ticks send what changed since this snapshot, not the whole fleet.
      this.#sentRows = new Map(snapshot.nodes.map((row) => [row.name, JSON.stringify(row)]));
      this.#sentModels = JSON.stringify(snapshot.models);
      this.#sentSites = sitesSent(snapshot.sites);
    }
    this.#write(res, `retry: 2000\n${sseEvent('snapshot', snapshot)}`);
    this.#timer ??= this.#clock.setTimeout(() => this.#tick(), FEED_TICK_MS);
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
    if (this.#clients.size === 0) {
      this.#sentRows = new Map();
      this.#sentModels = '';
      this.#sentSites = NOTHING_SENT;
      return;
    }
    let chunk = '';
    const rows = this.#source.rows();
    const { delta, sent } = rowsDelta(rows, this.#sentRows);
    this.#sentRows = sent;
    if (delta !== undefined) chunk += sseEvent('nodes', delta);
    const models: readonly ModelRow[] = this.#source.models(rows);
    const modelsText = JSON.stringify(models);
    if (modelsText !== this.#sentModels) chunk += sseEvent('models', models);
    this.#sentModels = modelsText;
    const sites = sitesDelta(this.#source.sites(), this.#sentSites);
    this.#sentSites = sites.sent;
    // `now` travels with it: the page shows the sites' record ages against the gateway's clock.
    if (sites.delta !== undefined) chunk += sseEvent('sites', { now: this.#clock.now(), ...sites.delta });
    if (transitions.length > 0) chunk += sseEvent('transitions', transitions);
    // Each new bucket's start is sent even when nothing happened, so the charts' window slides on.
    const now = this.#clock.now();
    const bucket = Math.floor(now / TRAFFIC_BUCKET_MS);
    if (Object.keys(traffic).length > 0 || bucket !== this.#sentBucket) chunk += sseEvent('traffic', { now, series: traffic });
    this.#sentBucket = bucket;
    this.#sinceHeartbeatMs += FEED_TICK_MS;
    if (chunk === '' && this.#sinceHeartbeatMs >= FEED_HEARTBEAT_MS) chunk = ': keep-alive\n\n';
    if (chunk !== '') {
      this.#sinceHeartbeatMs = 0;
      for (const res of [...this.#clients.keys()]) this.#write(res, chunk);
    }
    this.#dropStalled(now);
    this.#timer = this.#clock.setTimeout(() => this.#tick(), FEED_TICK_MS);
  }

  #write(res: FeedClient, chunk: string): void {
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
