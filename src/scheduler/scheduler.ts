// The request scheduler: every waiting rule of the request path in one place. A request is
// admitted at once (routed, and its lease claimed in the same tick), held while an asleep node
// wakes, or queued in its model's queue (by priority class, fair between tenants: fair-queue.ts)
// until a lease returns or the fleet changes. Events come in (admit, leaseReturned, fleetChanged,
// an abort, a deadline timer); all outside work goes out through SchedulerEffects, so every
// decision here is synchronous.

import type { Clock } from '#src/core/clock.ts';
import { CONFIG_DEFAULTS } from '#src/config/index.ts';
import { DEFAULT_TENANT } from '#src/core/tenant-class.ts';
import { ctxFor, residencyOf } from '#src/capacity/index.ts';
import { isRunningEntry } from '#src/kinds/index.ts';
import type { LeaseReturn, ListedModelFacts, NodeView, RouterHeldLoad, RoutingSnapshot, SwitchBook } from '#src/nodes/index.ts';
import {
  alternativeFilters,
  hasAlternativeIn,
  modelLimit,
  routerRoomsOf,
  withRouterRoom,
  type RouterRoom,
  wakeTarget,
  classifyUnroutable,
  mightFitLater,
  reservedTokens,
  route,
  routeSummary,
  RouteIndex,
  type RoutingDecision,
  type Exclusion,
  type Filter,
  type QueueTenant,
  type RouterSwitchView,
  type RouteRequest,
  type SelectionPolicy,
  type UnroutableKind,
} from '#src/routing/index.ts';
import type { Admission, QueueSettings, RefusalReason } from './admission.ts';
import type { EvictionResult, SchedulerEffects } from './effects.ts';
import type { ModelQueueReport } from './fair-queue.ts';
import { ModelQueues } from './model-queues.ts';
import { refreshOnMiss } from './refresh-on-miss.ts';
import type { QueueHolder, SwitchQueueConfig } from './queue-holder.ts';
import { awaitsRouterLoad, runsOnLimitedRouter } from './router-switches.ts';
import { swapAwareOrder } from './swap-order.ts';
import { NO_TICKET, SwitchClaims, type ProtectedModels } from './switch-claims.ts';
import { waitForWake, waitInQueue, type Wait, type Waiter } from './waits.ts';

type Selected = Extract<RoutingDecision, { kind: 'selected' }>;

/** Whose a request without a tenant is: the open `default` tenant, standard, weight 1. */
const OPEN_TENANT: QueueTenant = Object.freeze({ name: DEFAULT_TENANT, priority: 'standard', weight: 1 });

export interface SchedulerOptions {
  readonly clock: Clock;
  readonly filters: readonly Filter[];
  readonly policy: SelectionPolicy;
  readonly effects: SchedulerEffects;
  /** The one switch book, shared with the model manager (default: the scheduler's own). */
  readonly book?: SwitchBook;
  /** Models a request never switches out (pin) and those it switches out last (warm, preload). */
  readonly protectedModels?: () => ProtectedModels;
  /** The model side of switches in one (the gateway's model manager): its book, pins and evictions. */
  readonly models?: SwitchModels;
  /** Who queues for a limited router's switches, as configured (`[routing] router_queue`, tenants, `[cluster]`); absent = the defaults. */
  readonly switchQueue?: () => SwitchQueueConfig;
}

export interface SwitchModels {
  readonly book: SwitchBook;
  protectedModels(): ProtectedModels;
  evict(node: string, victim: string, model: string): Promise<EvictionResult>;
}

export class Scheduler {
  /** The filter pipeline requests are routed through (also what /admin/explain runs). */
  readonly filters: readonly Filter[];
  /** The same pipeline without has-capacity: what a failover is judged by (here and in every worker). */
  readonly #alternative: readonly Filter[];
  readonly #clock: Clock;
  readonly #policy: SelectionPolicy;
  readonly #effects: SchedulerEffects;
  readonly #queues = new ModelQueues<Waiter>();
  readonly #claims: SwitchClaims;
  /** Reused per-model verdicts of the pipeline's head, for as long as the fleet's views stay the same. */
  readonly #index = new RouteIndex();

  constructor(options: SchedulerOptions) {
    this.#clock = options.clock;
    const models = options.models;
    this.#claims = new SwitchClaims({
      clock: options.clock,
      effects: options.effects,
      book: options.book ?? options.models?.book,
      protectedModels: options.protectedModels ?? (models === undefined ? undefined : () => models.protectedModels()),
      evict:
        options.effects.evict ?? (models === undefined ? undefined : (node, victim, model) => models.evict(node, victim, model)),
      queued: (model) => this.#queues.depth(model),
      changed: () => this.fleetChanged(),
      switchQueue: options.switchQueue,
    });
    this.filters = withRouterRoom(options.filters, (node, view) => this.#switchView(node, view));
    this.#alternative = alternativeFilters(this.filters);
    this.#policy = options.policy;
    this.#effects = options.effects;
  }

  queueDepths(): Record<string, number> {
    return this.#queues.depths();
  }

  /** Every model's waiting requests by priority class and tenant (/admin/tenants, /admin/explain). */
  queueReport(): Record<string, ModelQueueReport> {
    return this.#queues.report();
  }

  /**
   * Routes one attempt of a request; `firstAttempt` is false for failovers. An admission decided at
   * once (nearly every request: routed, its lease claimed) is returned as it is, without a promise;
   * a request that waits (a queue, a wake, a re-listing, a switch) gets the promise of its admission.
   */
  admit(req: RouteRequest, settings: QueueSettings, signal: AbortSignal, firstAttempt: boolean): Admission | Promise<Admission> {
    // One snapshot for the decision and the wait (if it waits): they are taken in the same tick.
    const snapshot = this.#effects.snapshot();
    // In the model's queue when others wait there (in its class, by its tenant's share), however this one would route.
    if (this.#queues.open.size > 0 && this.#queues.depth(req.model) > 0)
      return this.#enqueue(req, waitInQueue(timeoutFor(req, settings, snapshot), settings, []), settings, signal);
    const decision = route(req, snapshot, this.filters, this.#policy, this.#index);
    // Reported only when it excluded a node: a notice with no exclusion has nothing to count (most requests).
    if (firstAttempt && decision.excluded.length > 0) this.#effects.notify({ kind: 'decided', req, decision });
    if (decision.kind === 'unroutable' && firstAttempt && this.#classify(req, decision.excluded) === 'unavailable') {
      const refresh = { clock: this.#clock, effects: this.#effects, filters: this.filters, waitMs: settings.missWaitMs };
      return refreshOnMiss(req, refresh).then((refreshed) =>
        this.#decide(
          req,
          refreshed ? route(req, this.#effects.snapshot(), this.filters, this.#policy, this.#index) : decision,
          snapshot,
          settings,
          signal,
        ),
      );
    }
    return this.#decide(req, decision, snapshot, settings, signal);
  }

  /**
   * Admits the node routing selected, or holds the request for a wake or a lease, or refuses it.
   * `snapshot` is the one the request's first decision was taken on: its wait is judged on it.
   */
  #decide(
    req: RouteRequest,
    decision: RoutingDecision,
    snapshot: RoutingSnapshot,
    settings: QueueSettings,
    signal: AbortSignal,
  ): Admission | Promise<Admission> {
    const admitted = decision.kind === 'selected' ? this.#claim(req, decision, 0, settings, signal) : undefined;
    if (admitted !== undefined) return admitted;
    const kind = this.#classify(req, decision.excluded);
    if (kind === 'unavailable') {
      const wake = this.#wakeFor(req);
      if (wake !== undefined) {
        return this.#enqueue(req, waitForWake(wake.timeoutMs, settings, decision.excluded), settings, signal);
      }
    }
    if (kind !== 'busy') return { kind: 'refused', reason: kind, excluded: decision.excluded, waitedMs: 0 };
    // The wait is built only for a request that waits (a closure per admission before).
    return this.#enqueue(req, waitInQueue(timeoutFor(req, settings, snapshot), settings, decision.excluded), settings, signal);
  }

  /** A lease came back: its model's queue may go on (every queue, if it freed a connection). */
  leaseReturned(returned: LeaseReturn): void {
    // Nobody waiting and no switch anywhere (nearly every return): only a freed connection is news.
    const queued = this.#queues.open.size > 0;
    // A model going idle may let a switch waiting in another model's queue go.
    if (
      returned.connectionFreed ||
      (this.#claims.book.quiet !== true && this.#claims.switches.pending(returned.node) !== undefined) ||
      (queued && this.#waitsForSwitch(returned.node))
    )
      this.fleetChanged();
    else if (queued) this.#retry(returned.model);
  }

  /** Capacity, health or listings changed somewhere: the head of every queue tries again, swap-aware. */
  fleetChanged(): void {
    this.#claims.switches.reconcile(this.#effects.snapshot().nodes);
    for (const model of this.#retryOrder()) this.#retry(model);
  }

  /**
   * The order the queues try again in: as they opened, unless they wait for limited routers; then
   * swap-aware (swap-order.ts): a model running or being loaded there first, the others by their
   * oldest request, one whose oldest request has waited routing.swap_after before the running one.
   */
  #retryOrder(): string[] {
    const models = this.#queues.models();
    if (models.length < 2) return models;
    const { nodes } = this.#effects.snapshot();
    if (!nodes.some((n) => modelLimit(n) !== undefined)) return models;
    const now = this.#clock.monotonicMs();
    const pending = (node: string): string | undefined => this.#claims.switches.pending(node)?.model;
    const waiting = models.map((model) => {
      const oldest = this.#queues.oldest(model);
      return {
        model,
        oldestAtMs: oldest?.enteredAtMs ?? now,
        boundMs: oldest?.wait.swapAfterMs ?? CONFIG_DEFAULTS.routing.swapAfterMs,
        running: runsOnLimitedRouter(model, nodes, pending),
      };
    });
    return swapAwareOrder(waiting, now);
  }

  /** Whether routing has another node for this request, counting busy ones (worth waiting for). */
  hasAlternative(req: RouteRequest): boolean {
    return hasAlternativeIn(req, this.#effects.snapshot(), this.#alternative);
  }

  /** Every limited router's switch state and busy models now: what a worker's mirror needs to judge a failover alike. */
  routerRooms(): RouterRoom[] {
    return routerRoomsOf(this.#effects.snapshot(), (node, view) => this.#switchView(node, view));
  }

  /**
   * Who holds the requests waiting for a model switch on each llama-server router node now (the router or
   * the gateway), with queue-holder.ts's reason: the decision routing acts on, read by /admin/hosts and explain.
   */
  switchQueues(): ReadonlyMap<string, QueueHolder> {
    const holders = new Map<string, QueueHolder>();
    for (const node of this.#effects.snapshot().nodes)
      if (node.capacity.role === 'router') holders.set(node.spec.name, this.#claims.holderOf(node));
    return holders;
  }

  /** The loads routers that queue themselves hold requests for now, by node, oldest first (/admin/models). */
  routerLoads(): ReadonlyMap<string, readonly RouterHeldLoad[]> {
    return this.#claims.routerWaits.report(this.#clock.monotonicMs());
  }

  #classify(req: RouteRequest, excluded: readonly Exclusion[]): UnroutableKind {
    return classifyUnroutable(excluded, mightFitLater(this.#effects.snapshot(), req));
  }

  /**
   * Takes the lease in the same tick as the decision that allowed it; a request that loads its model
   * gets a ticket. A switch on a full router is answered once its victim is unloaded.
   */
  #claim(
    req: RouteRequest,
    decision: Selected,
    waitedMs: number,
    settings: QueueSettings,
    signal: AbortSignal,
  ): Admission | Promise<Admission> | undefined {
    const node = decision.node;
    // The view's facts when it has them (the registry's views): no question asked of the capacity rules.
    const listed = node.facts?.models.get(req.model);
    const lease = this.#effects.claim(node.spec.name, req.model, reservedTokens(req, listed?.ctx ?? ctxFor(node, req.model)));
    if (lease === undefined) return undefined;
    // Only a model the node would load on demand needs a load ticket (or a switch): not one that runs there.
    const { ticket, victim, confirm } = loadsOnDemand(node, req.model, listed)
      ? this.#claims.ticketFor(req.model, node, settings)
      : NO_TICKET;
    const route = routeSummary(req.policy, decision.choice, decision.candidates, decision.excluded);
    const admitted = { kind: 'admitted' as const, node, route, waitedMs, load: ticket, release: () => lease.release() };
    // The model runs there and no switch is claimed (nearly every request): admitted now, no retry built.
    if (victim === undefined && confirm === undefined) return admitted;
    // Routed again (a claim another replica holds, a victim that would not unload): by the same deadline.
    const claimedAtMs = this.#clock.monotonicMs();
    const retry = (): Admission | Promise<Admission> =>
      this.admit(
        req,
        {
          ...settings,
          queueTimeoutMs: Math.max(0, settings.queueTimeoutMs - waitedMs - (this.#clock.monotonicMs() - claimedAtMs)),
        },
        signal,
        false,
      );
    const go = (): Admission | Promise<Admission> =>
      victim === undefined ? admitted : this.#claims.afterEviction(admitted, victim, req.model, retry);
    return confirm === undefined ? go() : this.#claims.afterClaim(admitted, confirm, go, retry);
  }

  /**
   * A node's switch view. On a limited router that queues itself (queue-holder.ts) a switch is due
   * once a request waiting inside it for a load has waited routing.swap_after; elsewhere, once a
   * request in the gateway's queues has.
   */
  #switchView(node: string, view?: NodeView): RouterSwitchView {
    const found = view ?? this.#effects.snapshot().nodes.find((n) => n.spec.name === node);
    const routerQueues =
      found !== undefined && modelLimit(found) !== undefined && this.#claims.holderOf(found).holder === 'router';
    if (!routerQueues) return this.#claims.view(node, this.#switchDue(node));
    const waits = this.#claims.routerWaits;
    const running = (id: string): boolean => {
      const listed = found.modelsById.get(id);
      return listed !== undefined && isRunningEntry(listed);
    };
    // A victim is gone once its target is listed coming up (the router loads only after it exited).
    const evicting = waits.evicting(node, running, running);
    return this.#claims.view(node, waits.due(node, this.#clock.monotonicMs()), true, evicting);
  }

  /**
   * Whether a queue waits for a switch on `node` past swap_after (counted from the node's last
   * switch), by its oldest request: one of a higher class that overtook it does not restart the clock.
   */
  #switchDue(node: string): boolean {
    const now = this.#clock.monotonicMs();
    const since = this.#claims.switches.settledAtMs(node);
    return this.#switchWaiters(node).some(
      (w) => now - Math.max(this.#queues.oldest(w.req.model)?.enteredAtMs ?? w.enteredAtMs, since) >= w.wait.swapAfterMs,
    );
  }

  #waitsForSwitch(node: string): boolean {
    return this.#queues.someHead((w) => waitsForSwitchOn(w, node));
  }

  #switchWaiters(node: string): Waiter[] {
    const heads = this.#queues.models().map((model) => this.#queues.head(model));
    return heads.filter((w): w is Waiter => w !== undefined && waitsForSwitchOn(w, node));
  }

  /**
   * Wakes one asleep node that could serve the request (one already waking is reused) and says
   * how long to hold the request for it; undefined when no asleep node could serve it anyway.
   */
  #wakeFor(req: RouteRequest): { readonly timeoutMs: number } | undefined {
    const target = wakeTarget(req, this.#effects.snapshot(), this.filters);
    if (target === undefined) return undefined;
    if (!target.alreadyWaking) this.#effects.wake(target.node.spec.name, `request for ${req.model}`);
    return { timeoutMs: target.node.spec.wakeTimeoutMs };
  }

  /** Queues a request until it is admitted, refused, its deadline passes or its client leaves. */
  #enqueue(req: RouteRequest, wait: Wait, settings: QueueSettings, signal: AbortSignal): Promise<Admission> {
    const tenant = req.tenant ?? OPEN_TENANT;
    // A full queue sheds its lowest class first: a newcomer of a higher class displaces the newest of them.
    const full = this.#queues.depth(req.model) >= settings.maxQueue;
    const victim = full ? this.#queues.victimFor(req.model, tenant.priority) : undefined;
    if (full && victim === undefined)
      return Promise.resolve({ kind: 'refused', reason: 'queue_full', excluded: wait.initial, waitedMs: 0 });
    if (signal.aborted) return Promise.resolve({ kind: 'refused', reason: 'aborted', excluded: wait.initial, waitedMs: 0 });
    if (wait.timeoutMs <= 0)
      return Promise.resolve({ kind: 'refused', reason: wait.timeoutReason, excluded: wait.initial, waitedMs: 0 });
    if (victim !== undefined) this.#giveUp(victim, 'queue_full');
    const enteredAtMs = this.#clock.monotonicMs();
    const ticket = {
      tenant,
      cost: reservedTokens(req, 0),
      enteredAtMs,
      agingMs: settings.queueAgingMs ?? CONFIG_DEFAULTS.routing.queueAgingMs,
    };
    return new Promise<Admission>((resolve) => {
      const onAbort = (): void => this.#giveUp(waiter, 'aborted');
      const timer = this.#clock.setTimeout(() => this.#giveUp(waiter, wait.timeoutReason), wait.timeoutMs);
      const waiter: Waiter = {
        req,
        settings,
        signal,
        loadTimeoutMs: settings.loadTimeoutMs,
        wait,
        enteredAtMs,
        excluded: wait.initial,
        settle: (admission) => {
          timer.cancel();
          signal.removeEventListener('abort', onAbort);
          resolve(admission);
        },
      };
      signal.addEventListener('abort', onAbort, { once: true });
      const others = this.#queues.depth(req.model);
      this.#queues.push(req.model, waiter, ticket);
      // It overtook the head (a higher class, a fairer share): it routes now, as the head it is.
      if (others > 0 && this.#queues.head(req.model) === waiter) this.#retry(req.model);
    });
  }

  /** A head that overtook a request held for a waking node (a higher class, a fairer share) waits for the same wake. */
  #waitsForWake(model: string, kind: UnroutableKind): boolean {
    return kind === 'unavailable' && this.#queues.some(model, (w) => w.wait.timeoutReason === 'wake_timeout');
  }

  #waited(waiter: Waiter): number {
    return this.#clock.monotonicMs() - waiter.enteredAtMs;
  }

  #giveUp(waiter: Waiter, reason: RefusalReason): void {
    if (!this.#queues.remove(waiter.req.model, waiter, this.#clock.monotonicMs())) return;
    waiter.settle({ kind: 'refused', reason, excluded: waiter.excluded, waitedMs: this.#waited(waiter) });
  }

  /** The head of a model's queue routes again; each one admitted lets the next try too. */
  #retry(model: string): void {
    this.#queues.age(model, this.#clock.monotonicMs());
    for (;;) {
      const waiter = this.#queues.head(model);
      if (waiter === undefined) return;
      const decision = route(waiter.req, this.#effects.snapshot(), this.filters, this.#policy, this.#index);
      const admitted =
        decision.kind === 'selected'
          ? this.#claim(waiter.req, decision, this.#waited(waiter), waiter.settings, waiter.signal)
          : undefined;
      if (admitted !== undefined) {
        this.#queues.served(model, waiter, this.#clock.monotonicMs());
        if (admitted instanceof Promise) void admitted.then(waiter.settle);
        else waiter.settle(admitted);
        // More capacity may have freed than this request needs.
        continue;
      }
      waiter.excluded = decision.excluded;
      const kind = this.#classify(waiter.req, decision.excluded);
      if (!waiter.wait.keepWaiting(kind) && !this.#waitsForWake(model, kind)) this.#giveUp(waiter, kind);
      return;
    }
  }
}

/** How long a request may wait: a request only a router loading its model can serve waits for the load as well. */
function timeoutFor(req: RouteRequest, settings: QueueSettings, snapshot: RoutingSnapshot): number {
  return settings.queueTimeoutMs + (awaitsRouterLoad(req.model, snapshot.nodes) ? settings.loadTimeoutMs : 0);
}

/** Whether `model` is listed on `node` to be loaded on demand (the view's facts, else the capacity rule). */
function loadsOnDemand(node: NodeView, model: string, listed: ListedModelFacts | undefined): boolean {
  return (listed?.residency ?? residencyOf(node, model)).state === 'on_demand';
}

/** Whether a queue's head waits for a switch on `node` (the node's models are full). */
function waitsForSwitchOn(waiter: Waiter, node: string): boolean {
  return waiter.excluded.some((e) => e.node === node && e.code === 'models_full');
}
