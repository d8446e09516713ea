// The dashboard's server side: it listens to the registry, proxy and mesh events, keeps the bounded
// traffic history, transition log and what it heard of remote sites, and feeds the live stream. One
// per gateway (gateway/parts.ts builds it); the admin routes read it.

import type { Clock } from '#src/core/clock.ts';
import type { EventBus } from '#src/core/events.ts';
import type { NodeRegistry, RegistryEvents } from '#src/nodes/index.ts';
import type { ProxyEvents } from '#src/proxy/index.ts';
import type { SitesSource } from '#src/core/site-rows.ts';
import type { DashboardSnapshot } from './dashboard-state.ts';
import type { SiteEventSource } from './site-events.ts';
import { fleetRow, modelRows, type FleetRow, type ModelRow } from './fleet-rows.ts';
import { LiveFeed } from './live-feed.ts';
import { attemptFailureText, ejectionText, NOT_A_FAILURE, type NodeFailure } from './node-failures.ts';
import { remoteModelsOf, setBounded, sitesPanel, type SitesPanel } from './site-rows.ts';
import { TRAFFIC_BUCKET_MS, TRAFFIC_WINDOW_MS, TrafficHistory, type TrafficSeries } from './traffic-history.ts';
import {
  appendBounded,
  discoveryTransition,
  ejectionTransition,
  freshnessTransition,
  healthTransition,
  reachabilityTransition,
  rejectionTransition,
  reloadTransition,
  wakeTransition,
  type Transition,
  type TransitionDraft,
} from './transitions.ts';

/** Transitions kept for a page that connects (newest); older ones are in the logs. */
export const MAX_KEPT_TRANSITIONS = 500;
/** Nodes whose last failure is remembered (configured or discovered nodes; this bounds the map). */
export const MAX_REMEMBERED_NODES = 4_096;
/** Sites remembered per kind of fact; pins bound them, this bounds a rejection naming unpinned ids. */
export const MAX_REMEMBERED_SITES = 1_024;

/** [mesh]: the mesh part's events and its /admin/sites source (undefined until the mesh runs). */
export interface DashboardMesh {
  readonly events: SiteEventSource;
  readonly sites: () => SitesSource | undefined;
}

export interface DashboardSources {
  readonly clock: Clock;
  readonly registryEvents: EventBus<RegistryEvents>;
  readonly proxyEvents: EventBus<ProxyEvents>;
  readonly registry: Pick<NodeRegistry, 'snapshot'>;
  readonly queueDepths: () => Record<string, number>;
  /** Declared aliases (alias → model id), as the request path resolves them. */
  readonly aliases: () => ReadonlyMap<string, string>;
  /** Absent for a gateway that cannot join a mesh (the Sites view then says it runs alone). */
  readonly mesh?: DashboardMesh;
}

export class DashboardHub {
  readonly feed: LiveFeed;
  readonly #s: DashboardSources;
  readonly #traffic = new TrafficHistory();
  #transitions: Transition[] = [];
  #pending: Transition[] = [];
  #seq = 0;
  readonly #offs: (() => void)[];
  readonly #acceptedAt = new Map<string, number>();
  readonly #rejectedAt = new Map<string, number>();
  readonly #unreachable = new Map<string, { readonly detail: string; readonly since: number }>();
  /** Per node: its last failed request or ejection (the Fleet view's last-error column). */
  readonly #failures = new Map<string, NodeFailure>();

  constructor(sources: DashboardSources) {
    this.#s = sources;
    const r = sources.registryEvents;
    const note = (draft: TransitionDraft | undefined): void => this.#note(draft);
    this.#offs = [
      r.on('node:health-changed', (e) => note(healthTransition(e))),
      r.on('node:discovery', (e) => note(discoveryTransition(e))),
      r.on('node:wake', (e) => note(wakeTransition(e))),
      r.on('node:ejected', (e) => {
        setBounded(
          this.#failures,
          e.node,
          { text: ejectionText(e.untilMs, sources.clock.now()), at: sources.clock.now() },
          MAX_REMEMBERED_NODES,
        );
        note(ejectionTransition(e));
      }),
      r.on('node:removed', ({ node }) => this.#failures.delete(node)),
      // Called for failed attempts only: a request that succeeds costs the Fleet view nothing.
      sources.proxyEvents.onUnless('proxy:attempt', 'result', NOT_A_FAILURE, (e) => {
        const text = attemptFailureText(e);
        if (text !== undefined) setBounded(this.#failures, e.node, { text, at: sources.clock.now() }, MAX_REMEMBERED_NODES);
      }),
      r.on('node:readmitted', ({ node }) => note({ node, kind: 'readmission', text: 'readmitted after ejection' })),
      r.on('node:added', ({ node }) => note({ node, kind: 'membership', text: 'node added' })),
      r.on('node:removed', ({ node, inFlight }) =>
        note({ node, kind: 'membership', text: `node removed (${inFlight} in flight)` }),
      ),
      // Recorded when the history is read (or every DEFERRED_CAPACITY requests), at each request's own time.
      sources.proxyEvents.deferred('proxy:request-finished', (e, at) => this.#traffic.record(e, at), sources.clock),
      sources.proxyEvents.on('mesh:site-reachability', (e) => {
        if (e.reachable) this.#unreachable.delete(e.site);
        else
          setBounded(
            this.#unreachable,
            e.site,
            { detail: e.detail ?? 'forward failed', since: sources.clock.now() },
            MAX_REMEMBERED_SITES,
          );
        note(reachabilityTransition(e));
      }),
      ...this.#meshListeners(sources.mesh),
    ];
    this.feed = new LiveFeed(sources.clock, {
      snapshot: () => this.snapshot(),
      rows: () => this.rows(),
      models: (rows) => this.models(rows),
      takeTransitions: () => this.#takePending(),
      takeTraffic: () => {
        this.#s.proxyEvents.flush();
        return this.#traffic.takeChanged(this.#s.clock.now());
      },
      sites: () => this.sites(),
    });
  }

  #meshListeners(mesh: DashboardMesh | undefined): (() => void)[] {
    if (mesh === undefined) return [];
    const now = (): number => this.#s.clock.now();
    return [
      mesh.events.on('mesh:site-freshness', (e) => this.#note(freshnessTransition(e))),
      mesh.events.on('mesh:record-accepted', ({ site }) => setBounded(this.#acceptedAt, site, now(), MAX_REMEMBERED_SITES)),
      mesh.events.on('mesh:record-rejected', (e) => {
        if (e.site !== undefined) setBounded(this.#rejectedAt, e.site, now(), MAX_REMEMBERED_SITES);
        this.#note(rejectionTransition(e));
      }),
    ];
  }

  /** The Sites view: every pinned site and this site's own set ([mesh] only). */
  sites(): SitesPanel {
    const memory = { acceptedAt: this.#acceptedAt, rejectedAt: this.#rejectedAt, unreachable: this.#unreachable };
    return sitesPanel(this.#s.mesh?.sites(), memory, this.#s.clock.now());
  }

  /** A config reload, applied or rejected: the Events view shows both. */
  noteReload(outcome: {
    readonly ok: boolean;
    readonly problems?: readonly { readonly path: string; readonly message: string }[];
  }): void {
    this.#note(reloadTransition(outcome));
  }

  rows(): FleetRow[] {
    const snapshot = this.#s.registry.snapshot();
    const failures = this.#failures;
    const input = {
      views: snapshot.nodes,
      inFlight: snapshot.inFlight,
      usage: snapshot.usage,
      queueDepths: this.#s.queueDepths(),
      now: snapshot.now,
      failure: (node: string) => failures.get(node),
    };
    return snapshot.nodes.map((view) => fleetRow(view, input));
  }

  models(rows: readonly FleetRow[]): ModelRow[] {
    return modelRows(rows, this.#s.aliases(), this.#s.queueDepths(), remoteModelsOf(this.#s.mesh?.sites()));
  }

  snapshot(): DashboardSnapshot {
    this.#s.proxyEvents.flush();
    const now = this.#s.clock.now();
    const nodes = this.rows();
    return {
      now,
      nodes,
      models: this.models(nodes),
      sites: this.sites(),
      transitions: this.#transitions,
      traffic: this.#traffic.all(now),
      traffic_bucket_ms: TRAFFIC_BUCKET_MS,
      traffic_window_ms: TRAFFIC_WINDOW_MS,
    };
  }

  traffic(): TrafficSeries {
    this.#s.proxyEvents.flush();
    return this.#traffic.all(this.#s.clock.now());
  }

  close(): void {
    for (const off of this.#offs) off();
    this.feed.close();
  }

  #note(draft: TransitionDraft | undefined): void {
    if (draft === undefined) return;
    const entry: Transition = { seq: ++this.#seq, at: this.#s.clock.now(), ...draft };
    this.#transitions = appendBounded(this.#transitions, entry, MAX_KEPT_TRANSITIONS);
    this.#pending = appendBounded(this.#pending, entry, MAX_KEPT_TRANSITIONS);
  }

  #takePending(): Transition[] {
    const pending = this.#pending;
    this.#pending = [];
    return pending;
  }
}
