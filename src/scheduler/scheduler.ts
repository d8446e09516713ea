// The request scheduler: every waiting rule of the request path in one place. A request is
// admitted at once (routed, and its lease claimed in the same tick), held while an asleep node
// wakes, or queued behind its model's earlier requests (FIFO) until a lease returns or the fleet
// changes. Events come in (admit, leaseReturned, fleetChanged, an abort, a deadline timer); all
// outside work goes out through SchedulerEffects, so every decision here is synchronous.

import type { Clock } from '#src/core/clock.ts';
import { ctxFor } from '#src/capacity/index.ts';
import type { LeaseReturn, NodeView } from '#src/nodes/index.ts';
import {
  wakeTarget,
  classifyUnroutable,
  filterCandidates,
  mightFitLater,
  reservedTokens,
  route,
  type Exclusion,
  type Filter,
  type RouteRequest,
  type SelectionPolicy,
  type UnroutableKind,
} from '#src/routing/index.ts';
import type { SchedulerEffects } from './effects.ts';
import { ModelQueues } from './model-queues.ts';
import { refreshOnMiss } from './refresh-on-miss.ts';

export type RefusalReason = UnroutableKind | 'queue_full' | 'queue_timeout' | 'wake_timeout' | 'aborted';

export type Admission =
  | {
      readonly kind: 'admitted';
      readonly node: NodeView;
      /** The selection policy that picked the node, and why (the `x-switchyard-route` header). */
      readonly route: { readonly policy: string; readonly reason: string };
      readonly waitedMs: number;
      release(): void;
    }
  | { readonly kind: 'refused'; readonly reason: RefusalReason; readonly excluded: readonly Exclusion[]; readonly waitedMs: number };

/** The waiting limits, read from the request's settings snapshot. */
export interface QueueSettings {
  readonly queueTimeoutMs: number;
  readonly maxQueue: number;
  /** How long refresh-on-miss waits for fresh listings (0: re-list, but do not wait). */
  readonly missWaitMs: number;
}

export interface SchedulerOptions {
  readonly clock: Clock;
  readonly filters: readonly Filter[];
  readonly policy: SelectionPolicy;
  readonly effects: SchedulerEffects;
}

interface Wait {
  readonly timeoutMs: number;
  readonly timeoutReason: 'queue_timeout' | 'wake_timeout';
  /** Whether an unroutable verdict is worth waiting out (busy nodes; a node still waking). */
  readonly keepWaiting: (kind: UnroutableKind) => boolean;
  readonly initial: readonly Exclusion[];
}

interface Waiter {
  readonly req: RouteRequest;
  readonly wait: Wait;
  readonly enteredAtMs: number;
  /** Why routing last said no (reported if the wait ends in a refusal). */
  excluded: readonly Exclusion[];
  readonly settle: (admission: Admission) => void;
}

const busyOnly = (kind: UnroutableKind): boolean => kind === 'busy';
const anythingButTooLarge = (kind: UnroutableKind): boolean => kind !== 'too_large';

export class Scheduler {
  /** The filter pipeline requests are routed through (also what /admin/explain runs). */
  readonly filters: readonly Filter[];
  readonly #clock: Clock;
  readonly #policy: SelectionPolicy;
  readonly #effects: SchedulerEffects;
  readonly #queues = new ModelQueues<Waiter>();

  constructor(options: SchedulerOptions) {
    this.#clock = options.clock;
    this.filters = options.filters;
    this.#policy = options.policy;
    this.#effects = options.effects;
  }

  queueDepths(): Record<string, number> {
    return this.#queues.depths();
  }

  /** Routes one attempt of a request; `firstAttempt` is false for failovers. */
  async admit(req: RouteRequest, settings: QueueSettings, signal: AbortSignal, firstAttempt: boolean): Promise<Admission> {
    const queueWait: Wait = { timeoutMs: settings.queueTimeoutMs, timeoutReason: 'queue_timeout', keepWaiting: busyOnly, initial: [] };
    // Behind requests already queued for this model (FIFO), however this one would route.
    if (this.#queues.depth(req.model) > 0) return this.#enqueue(req, queueWait, settings.maxQueue, signal);
    let decision = route(req, this.#effects.snapshot(), this.filters, this.#policy);
    if (firstAttempt) this.#effects.notify({ kind: 'decided', req, decision });
    if (decision.kind === 'unroutable' && firstAttempt && this.#classify(req, decision.excluded) === 'unavailable') {
      const refresh = { clock: this.#clock, effects: this.#effects, filters: this.filters, waitMs: settings.missWaitMs };
      if (await refreshOnMiss(req, refresh)) decision = route(req, this.#effects.snapshot(), this.filters, this.#policy);
    }
    const admitted = decision.kind === 'selected' ? this.#claim(req, decision.node, decision.choice.reason, 0) : undefined;
    if (admitted !== undefined) return admitted;
    const kind = this.#classify(req, decision.excluded);
    if (kind === 'unavailable') {
      const wake = this.#wakeFor(req);
      if (wake !== undefined) {
        const hold: Wait = { timeoutMs: wake.timeoutMs, timeoutReason: 'wake_timeout', keepWaiting: anythingButTooLarge, initial: decision.excluded };
        return this.#enqueue(req, hold, settings.maxQueue, signal);
      }
    }
    if (kind !== 'busy') return { kind: 'refused', reason: kind, excluded: decision.excluded, waitedMs: 0 };
    return this.#enqueue(req, queueWait, settings.maxQueue, signal);
  }

  /** A lease came back: its model's queue may go on (every queue, if it freed a connection). */
  leaseReturned(returned: LeaseReturn): void {
    if (returned.connectionFreed) this.fleetChanged();
    else this.#retry(returned.model);
  }

  /** Capacity, health or listings changed somewhere: the head of every queue tries again. */
  fleetChanged(): void {
    for (const model of this.#queues.models()) this.#retry(model);
  }

  /** Whether routing has another node for this request, counting busy ones (worth waiting for). */
  hasAlternative(req: RouteRequest): boolean {
    const filters = this.filters.filter((f) => f.name !== 'has-capacity');
    return filterCandidates(req, this.#effects.snapshot(), filters).kept.length > 0;
  }

  #classify(req: RouteRequest, excluded: readonly Exclusion[]): UnroutableKind {
    return classifyUnroutable(excluded, mightFitLater(this.#effects.snapshot(), req));
  }

  /** Takes the lease in the same tick as the decision that allowed it. */
  #claim(req: RouteRequest, node: NodeView, reason: string, waitedMs: number): Admission | undefined {
    const lease = this.#effects.claim(node.spec.name, req.model, reservedTokens(req, ctxFor(node, req.model)));
    if (lease === undefined) return undefined;
    return { kind: 'admitted', node, route: { policy: req.policy, reason }, waitedMs, release: () => lease.release() };
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
  #enqueue(req: RouteRequest, wait: Wait, maxQueue: number, signal: AbortSignal): Promise<Admission> {
    if (this.#queues.depth(req.model) >= maxQueue) {
      return Promise.resolve({ kind: 'refused', reason: 'queue_full', excluded: wait.initial, waitedMs: 0 });
    }
    if (signal.aborted) return Promise.resolve({ kind: 'refused', reason: 'aborted', excluded: wait.initial, waitedMs: 0 });
    if (wait.timeoutMs <= 0) return Promise.resolve({ kind: 'refused', reason: wait.timeoutReason, excluded: wait.initial, waitedMs: 0 });
    return new Promise<Admission>((resolve) => {
      const onAbort = (): void => this.#giveUp(waiter, 'aborted');
      const timer = this.#clock.setTimeout(() => this.#giveUp(waiter, wait.timeoutReason), wait.timeoutMs);
      const waiter: Waiter = {
        req,
        wait,
        enteredAtMs: this.#clock.monotonicMs(),
        excluded: wait.initial,
        settle: (admission) => {
          timer.cancel();
          signal.removeEventListener('abort', onAbort);
          resolve(admission);
        },
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.#queues.push(req.model, waiter);
    });
  }

  #waited(waiter: Waiter): number {
    return this.#clock.monotonicMs() - waiter.enteredAtMs;
  }

  #giveUp(waiter: Waiter, reason: RefusalReason): void {
    if (!this.#queues.remove(waiter.req.model, waiter)) return;
    waiter.settle({ kind: 'refused', reason, excluded: waiter.excluded, waitedMs: this.#waited(waiter) });
  }

  /** The head of a model's queue routes again; each one admitted lets the next try too. */
  #retry(model: string): void {
    for (;;) {
      const waiter = this.#queues.head(model);
      if (waiter === undefined) return;
      const decision = route(waiter.req, this.#effects.snapshot(), this.filters, this.#policy);
      const admitted = decision.kind === 'selected' ? this.#claim(waiter.req, decision.node, decision.choice.reason, this.#waited(waiter)) : undefined;
      if (admitted !== undefined) {
        this.#queues.remove(model, waiter);
        waiter.settle(admitted);
        // More capacity may have freed than this request needs.
        continue;
      }
      waiter.excluded = decision.excluded;
      const kind = this.#classify(waiter.req, decision.excluded);
      if (!waiter.wait.keepWaiting(kind)) this.#giveUp(waiter, kind);
      return;
    }
  }
}
