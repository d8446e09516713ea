// The sole owner of per-node state. Loops feed it observations; it applies the pure transitions,
// publishes events, and hands out frozen snapshots (copies: no reader can change its state).

import type { Clock } from '#src/core/clock.ts';
import type { EventBus } from '#src/core/events.ts';
import { diffNodes, isSameAllowList, nodeContinuity, type NodeChange, type NodeSpec } from '#src/config/index.ts';
import {
  keepNewerPushes,
  modelsAfterEvent,
  nextDiscoveryState,
  restrictDiscovery,
  type DiscoveryResult,
  type PushOutcome,
} from '#src/discovery/index.ts';
import type { ModelEvent } from '#src/kinds/index.ts';
import {
  rememberContexts,
  sameCapacity,
  withLearnedContexts,
  type DecodeSample,
  type NodeCapacity,
  type RatioSample,
} from '#src/capacity/index.ts';
import { isEjected, observeUpstream, type EjectionPolicy, type UpstreamVerdict } from './health/passive.ts';
import { observeProbe, type ProbeOutcome } from './health/health-state.ts';
import type { Lease, LeaseReturn, NodeView, RoutingSnapshot } from './node.ts';
import { frozenDiscovery } from './frozen-discovery.ts';
import { freshRuntime, reposition, viewOf, type NodeRuntime } from './node-runtime.ts';
import type { LoadScrape } from './load/load-reading.ts';
import { InFlightCounts, LeaseTable } from './in-flight-counts.ts';
import { readersOf } from './snapshot-readers.ts';
import { ModelOffers } from './model-offers.ts';
import type { RegistryEvents } from './registry-events.ts';

export interface NodeRegistryOptions {
  readonly clock: Clock;
  readonly events: EventBus<RegistryEvents>;
  readonly failThreshold: number;
  /** Called when a lease is returned, so requests waiting for what it freed can try again. */
  readonly onLeaseReturned?: (returned: LeaseReturn) => void;
  /** Requests in flight per node that use up its connections (upstream.max_connections). */
  readonly connectionLimit?: number;
  /** A node said it does not have a model its listing showed: its owner lists it again. */
  readonly onModelVanished?: (nodeName: string) => void;
}

export class NodeRegistry {
  /** Slot and context-budget usage per (node, model), taken only with a claim; routing reads it through snapshots. */
  readonly #leases = new LeaseTable();
  readonly #clock: Clock;
  readonly #events: EventBus<RegistryEvents>;
  #failThreshold: number;
  #connectionLimit: number | undefined;
  #onLeaseReturned: ((returned: LeaseReturn) => void) | undefined;
  /** Passive ejection's thresholds (upstream.*), set once wired and on reload. */
  #ejection: EjectionPolicy | undefined;
  readonly #onModelVanished: ((nodeName: string) => void) | undefined;
  #active = new Map<string, NodeRuntime>();
  /** Removed nodes whose in-flight requests are still finishing; never routed to. */
  readonly #retiring = new Set<NodeRuntime>();
  #views: readonly NodeView[] | undefined;
  /** Per model, the views that may serve it (model-offers.ts), for the views array in force. */
  readonly #offers = new ModelOffers();
  /** In-flight requests per active node by position (mirrors each runtime's count; routing reads it without lookups). */
  readonly #counts: InFlightCounts;
  /** The snapshot's live readers, built once per node set (a snapshot reads the set it was taken from), not per snapshot. */
  #readers = readersOf(this.#active, this.#leases);

  constructor(options: NodeRegistryOptions) {
    this.#clock = options.clock;
    this.#events = options.events;
    this.#failThreshold = options.failThreshold;
    this.#connectionLimit = options.connectionLimit;
    this.#onLeaseReturned = options.onLeaseReturned;
    this.#onModelVanished = options.onModelVanished;
    this.#counts = new InFlightCounts(options.connectionLimit);
  }

  /** The node events this registry publishes (registry-events.ts), to subscribe to: tests wait on them. */
  get events(): Pick<EventBus<RegistryEvents>, 'on'> {
    return this.#events;
  }

  /** Who is told when a lease is returned (the scheduler, built after this registry): set once by the owner. */
  setLeaseReturned(listener: (returned: LeaseReturn) => void): void {
    this.#onLeaseReturned = listener;
  }

  /**
   * Passive health, wired once: every real request's outcome (`subscribe` hands this registry's listener
   * to its source), judged by `verdict`, can eject its node under the ejection policy last set.
   */
  followOutcomes<R>(
    subscribe: (listener: (outcome: { readonly node: string; readonly result: R }) => void) => void,
    verdict: (result: R) => UpstreamVerdict,
    policy: EjectionPolicy,
  ): void {
    this.#ejection = policy;
    subscribe((outcome) => this.observeUpstream(outcome.node, verdict(outcome.result), this.#ejection ?? policy));
  }

  setEjectionPolicy(policy: EjectionPolicy): void {
    this.#ejection = policy;
  }

  setFailThreshold(failThreshold: number): void {
    this.#failThreshold = failThreshold;
  }

  setConnectionLimit(limit: number): void {
    this.#connectionLimit = limit;
    this.#counts.setLimit(limit);
  }

  /** Replaces the node set, judging each node against the set held now (see `applyChange`). */
  setNodes(specs: readonly NodeSpec[]): void {
    this.applyChange(
      diffNodes(
        [...this.#active.values()].map((r) => r.spec),
        specs,
      ),
    );
  }

  /** A reload's node change: kept and relisted nodes keep health and discovery (spec updated); added and replaced start fresh; removed and replaced retire. */
  applyChange(change: NodeChange): void {
    const now = this.#clock.now();
    const carried = new Map<string, NodeRuntime>();
    for (const { old, next } of [...change.nodesKept, ...change.nodesRelisted]) {
      const runtime = this.#active.get(next.name);
      if (runtime === undefined) continue;
      // A narrowed allow-list applies at once; a widened one waits for the re-listing it triggers.
      if (!isSameAllowList(old.allowedModels, next.allowedModels)) {
        runtime.discovery = frozenDiscovery(restrictDiscovery(runtime.discovery, next.allowedModels, now), runtime.discovery);
      }
      if (nodeContinuity(old, next) === 'relisted') runtime.lacking = {}; // another kind may serve other endpoints
      runtime.spec = Object.freeze({ ...next });
      carried.set(next.name, runtime);
    }
    const active = new Map<string, NodeRuntime>();
    for (const spec of change.nodes) {
      const kept = carried.get(spec.name);
      active.set(spec.name, kept ?? freshRuntime(spec, now));
      if (kept === undefined) this.#events.emit('node:added', { node: spec.name });
    }
    for (const [name, runtime] of this.#active) {
      if (active.get(name) === runtime) continue;
      this.#events.emit('node:removed', { node: name, inFlight: runtime.inFlight });
      if (runtime.inFlight > 0) this.#retiring.add(runtime);
    }
    this.#counts.reset(reposition(this.#active.values(), active.values()));
    this.#active = active;
    this.#readers = readersOf(active, this.#leases);
    this.#views = undefined;
  }

  observeHealth(nodeName: string, outcome: ProbeOutcome): void {
    const runtime = this.#active.get(nodeName);
    if (runtime === undefined) return;
    const from = runtime.health;
    const canSleep = runtime.spec.wake !== undefined;
    const to = Object.freeze(observeProbe(from, outcome, { failThreshold: this.#failThreshold, canSleep }, this.#clock.now()));
    runtime.health = to;
    // A steady healthy node changes only lastProbeAt: routing views need no rebuild for that.
    if (from.status !== to.status || from.fails !== to.fails || from.lastError !== to.lastError) this.#touch(runtime);
    this.#events.emit('node:probed', { node: nodeName, outcome });
    if (from.status !== to.status) this.#events.emit('node:health-changed', { node: nodeName, from, to });
  }

  /** A listing (or, `pushed`, a pushed model event's listing: observeModelEvent); `askedAtMs`: when the listing was asked (monotonic). */
  observeDiscovery(nodeName: string, result: DiscoveryResult, askedAtMs?: number): void {
    const runtime = this.#active.get(nodeName);
    if (runtime === undefined) return;
    const from = runtime.discovery;
    if (result.ok && result.pushed !== true && runtime.pushedAt.size > 0 && askedAtMs !== undefined) {
      result = { ...result, models: keepNewerPushes(result.models, from.models, runtime.pushedAt, askedAtMs) };
      runtime.pushedAt = new Map([...runtime.pushedAt].filter(([, at]) => at >= askedAtMs));
    }
    const to = frozenDiscovery(nextDiscoveryState(from, result, this.#clock.now(), { failThreshold: this.#failThreshold }), from);
    runtime.discovery = to;
    // A new listing may come from an upgraded server: the endpoints it lacked are tried again.
    const relearn = from.models !== to.models && Object.keys(runtime.lacking).length > 0;
    if (relearn) runtime.lacking = {};
    const changed =
      relearn ||
      from.phase !== to.phase ||
      from.models !== to.models ||
      from.fails !== to.fails ||
      from.empties !== to.empties ||
      from.lastError !== to.lastError;
    if (changed) this.#touch(runtime);
    this.#events.emit('node:discovery', { node: nodeName, result, from, to });
  }

  /**
   * A pushed model event (the node's model event stream, model-push.ts) for the node while at `url`:
   * applied to its listing and fed to the same discovery state machine as a listing (`pushed`).
   * Answers what came of it: `relist` when only a listing can tell (`fresh`: an old one will not do).
   */
  observeModelEvent(nodeName: string, url: string, event: ModelEvent): PushOutcome | undefined {
    const runtime = this.#active.get(nodeName);
    if (runtime === undefined || runtime.spec.url !== url) return undefined;
    const outcome = modelsAfterEvent(runtime.discovery.models, event);
    if (outcome.kind !== 'models') return outcome;
    const at = this.#clock.monotonicMs();
    const changedIds = event.kind === 'relist' ? [] : [event.model];
    runtime.pushedAt = new Map([...runtime.pushedAt, ...changedIds.map((id): [string, number] => [id, at])]);
    this.observeDiscovery(nodeName, { ok: true, models: outcome.models, pushed: true });
    return outcome;
  }

  /** A fresh capacity reading (same poll as the listing), applied only while the node is at `url` (not a new node after a reload). */
  observeCapacity(nodeName: string, url: string, capacity: NodeCapacity): void {
    const runtime = this.#active.get(nodeName);
    if (runtime === undefined || runtime.spec.url !== url) return;
    const { capacity: merged, learned } = withLearnedContexts(capacity, runtime.learned, this.#clock.now());
    runtime.learned = learned;
    // Polls usually repeat the same figures: keep the same object so views stay valid.
    if (sameCapacity(merged, runtime.capacity)) return;
    runtime.capacity = merged;
    runtime.knownContexts = rememberContexts(runtime.knownContexts, merged.models);
    this.#touch(runtime);
    this.#events.emit('node:capacity', { node: nodeName, capacity });
  }

  /** A refusal stated the node's context (llama.cpp's n_ctx, vLLM's "maximum context length is N"): kept until a poll gives it, or LEARNED_CONTEXT_TTL_MS passes. */
  learnContext(nodeName: string, url: string, model: string, nCtx: number): void {
    const runtime = this.#active.get(nodeName);
    if (runtime === undefined || runtime.spec.url !== url) return;
    const prior = runtime.capacity.models[model];
    if (prior?.nCtx === nCtx) return;
    const figures = { nCtx, slots: prior?.slots };
    runtime.learned = { ...runtime.learned, [model]: { nCtx, atMs: this.#clock.now() } };
    runtime.capacity = { ...runtime.capacity, models: { ...runtime.capacity.models, [model]: figures } };
    runtime.knownContexts = rememberContexts(runtime.knownContexts, { [model]: figures });
    this.#touch(runtime);
    this.#events.emit('node:capacity', { node: nodeName, capacity: runtime.capacity });
  }

  /** A route-level 404 for `endpoint` at `url`: the node lacks it (serves-endpoint) until its listing, kind or key changes. */
  /** A node said it does not have a model its listing showed (the fleet-reports port): it is listed again. */
  modelVanished(nodeName: string): void {
    this.#onModelVanished?.(nodeName);
  }

  learnLackingEndpoint(nodeName: string, url: string, endpoint: string, said: string): void {
    const runtime = this.#active.get(nodeName);
    if (runtime?.spec.url !== url || runtime.lacking[endpoint] !== undefined) return;
    runtime.lacking = { ...runtime.lacking, [endpoint]: said.slice(0, 200) };
    this.#touch(runtime);
  }

  /** A node's answer stated its prompt count: its bytes per token are learned (capacity/learned-figures.ts). */
  learnTokenRatio(nodeName: string, url: string, model: string, sample: RatioSample): void {
    const runtime = this.#active.get(nodeName);
    if (runtime?.spec.url === url && runtime.tokenRatios.learn(model, sample, this.#clock.now())) this.#touch(runtime);
  }

  /** A node's answer showed how fast it generates the model's tokens (capacity/learned-figures.ts). */
  learnDecodeRate(nodeName: string, url: string, model: string, sample: DecodeSample): void {
    const runtime = this.#active.get(nodeName);
    if (runtime?.spec.url === url && runtime.decodeRates.learn(model, sample, this.#clock.now())) this.#touch(runtime);
  }

  /**
   * A real request's outcome: enough failures in a row eject the node for `ejectForMs`. Views carry the deadline (readers
   * compare it with their `now`); a timer only announces the readmission (logs; queued requests may try again).
   */
  observeUpstream(nodeName: string, verdict: UpstreamVerdict, policy: EjectionPolicy): void {
    const runtime = this.#active.get(nodeName);
    // Nothing to record (most requests): a neutral outcome, or a success with no failure counted.
    if (runtime === undefined || verdict === 'neutral' || (verdict === 'success' && runtime.passive.consecutiveFailures === 0))
      return;
    const now = this.#clock.now();
    const before = runtime.passive;
    runtime.passive = observeUpstream(before, verdict, policy, now);
    const until = runtime.passive.ejectedUntil;
    if (until === before.ejectedUntil) return;
    this.#touch(runtime);
    if (isEjected(before, now) || until === undefined || until <= now) return;
    this.#events.emit('node:ejected', { node: nodeName, untilMs: until });
    this.#clock.setTimeout(() => {
      if (this.#active.get(nodeName) !== runtime || isEjected(runtime.passive, this.#clock.now())) return;
      this.#events.emit('node:readmitted', { node: nodeName });
    }, until - now);
  }

  /** A load scrape's result, kept while the node is configured at `url` (routing reads it; no view changes). */
  observeLoad(nodeName: string, url: string, scrape: LoadScrape): void {
    const runtime = this.#active.get(nodeName);
    if (runtime !== undefined && runtime.spec.url === url)
      runtime.load = { ...scrape, atMs: this.#clock.now(), inFlightAtScrape: runtime.inFlight };
  }

  /** A wake was sent: the node counts as waking (while asleep) until its wake_timeout passes. */
  markWakeSent(nodeName: string): void {
    const runtime = this.#active.get(nodeName);
    if (runtime === undefined) return;
    runtime.lastWakeAt = this.#clock.now();
    this.#touch(runtime);
  }

  #touch(runtime: NodeRuntime): void {
    runtime.view = undefined;
    this.#views = undefined;
  }

  /** Frozen routing views, rebuilt only after a routing-relevant change (not a steady probe or listing); per-node views reused. */
  views(): readonly NodeView[] {
    if (this.#views === undefined) {
      const views: NodeView[] = [];
      for (const runtime of this.#active.values()) {
        runtime.view ??= viewOf(runtime);
        views.push(runtime.view);
      }
      this.#views = Object.freeze(views);
    }
    return this.#views;
  }

  /** The views that may serve `model` (list it, or have no listing yet), in config order: a request reads these, not every view. */
  offering(model: string): readonly NodeView[] {
    return this.#offers.of(this.views(), model);
  }

  /** Up-to-the-moment copies (last probe, last listing time) for /health and admin views. */
  freshViews(): readonly NodeView[] {
    return Object.freeze([...this.#active.values()].map((r) => viewOf(r)));
  }

  view(nodeName: string): NodeView | undefined {
    const runtime = this.#active.get(nodeName);
    return runtime === undefined ? undefined : (runtime.view ??= viewOf(runtime));
  }

  /** Every admission takes one: one object, no closures (the readers are the node set's, see `#readers`). */
  snapshot(): RoutingSnapshot {
    const readers = this.#readers;
    const counts = this.#counts;
    return {
      nodes: this.views(),
      now: this.#clock.now(),
      inFlight: readers.inFlight,
      usage: readers.usage,
      load: readers.load,
      inFlightByPosition: counts.byPosition,
      inFlightChanges: counts,
      nodesAtConnectionLimit: counts.atLimit,
      connectionLimit: this.#connectionLimit,
    };
  }

  inFlight(nodeName: string): number {
    return this.#active.get(nodeName)?.inFlight ?? 0;
  }

  /** In-flight requests on nodes removed by a reload that have not finished yet. */
  retiringInFlight(): number {
    return [...this.#retiring].reduce((total, runtime) => total + runtime.inFlight, 0);
  }

  /** Claims a node for one request (one in flight, `tokens` of the model's slots and budget), returned by one release; undefined if not active. */
  claim(nodeName: string, model: string, tokens: number): Lease | undefined {
    const runtime = this.#active.get(nodeName);
    if (runtime === undefined) return undefined;
    runtime.inFlight += 1;
    this.#mirror(runtime);
    const usage = this.#leases.acquire(nodeName, model, tokens);
    let released = false;
    return {
      node: nodeName,
      model,
      tokens,
      release: () => {
        if (released) return;
        released = true;
        usage.release();
        const wasFull = this.#connectionLimit !== undefined && runtime.inFlight >= this.#connectionLimit;
        runtime.inFlight -= 1;
        this.#mirror(runtime);
        if (runtime.inFlight === 0) this.#retiring.delete(runtime);
        // Requests of any model may be queued behind this node's connections, not only this one's.
        const connectionFreed = wasFull && this.#active.get(nodeName) === runtime;
        this.#onLeaseReturned?.({ node: nodeName, model, connectionFreed });
      },
    };
  }

  #mirror(runtime: NodeRuntime): void {
    this.#counts.set(runtime.position, runtime.inFlight);
  }

  /** Every (node, model) with leases out, as plain copies (metrics). */
  leaseEntries(): { node: string; model: string; requests: number; tokens: number }[] {
    return this.#leases.entries();
  }

  /** Leases out across all nodes, retiring ones included. */
  leaseCount(): number {
    return this.#leases.totalRequests();
  }
}
