// Admission: route the request and take its leases in the same tick; when every node that could
// serve it is busy (no slot, no context budget), wait in the model's FIFO queue for a turn.

import type { Clock } from '#src/core/clock.ts';
import { ctxFor } from '#src/capacity/index.ts';
import type { NodeRegistry, NodeView } from '#src/nodes/index.ts';
import {
  classifyUnroutable,
  mightFitLater,
  reservedTokens,
  route,
  type Exclusion,
  type Filter,
  type RouteRequest,
  type RoutingDecision,
  type SelectionPolicy,
  type UnroutableKind,
} from '#src/routing/index.ts';
import type { AdmissionQueue } from './admission-queue.ts';

export type Admission =
  | { readonly kind: 'admitted'; readonly node: NodeView; readonly waitedMs: number; release(): void }
  | {
      readonly kind: 'refused';
      readonly reason: UnroutableKind | 'queue_full' | 'queue_timeout' | 'wake_timeout' | 'aborted';
      readonly excluded: readonly Exclusion[];
      readonly waitedMs: number;
    };

export interface AdmissionDeps {
  readonly clock: Clock;
  readonly registry: NodeRegistry;
  readonly filters: readonly Filter[];
  readonly policy: SelectionPolicy;
  readonly queue: AdmissionQueue;
  readonly queueTimeoutMs: () => number;
  readonly maxQueue: () => number;
  /** Refresh-on-miss; resolves true when re-routing is worth it. */
  readonly onModelMiss: (req: RouteRequest) => Promise<boolean>;
  /** Observes the first routing decision of each request (metrics). */
  readonly onDecision: (req: RouteRequest, decision: RoutingDecision) => void;
  /**
   * When nothing awake can serve: wakes an asleep node that could (once per wake window) and says
   * how long to hold the request for it; undefined when no asleep node could serve it anyway.
   */
  readonly wakeFor: (req: RouteRequest) => { readonly timeoutMs: number } | undefined;
}

function lease(deps: AdmissionDeps, req: RouteRequest, node: NodeView): () => void {
  const nodeLease = deps.registry.lease(node.spec.name);
  const capacityLease = deps.registry.leases.acquire(node.spec.name, req.model, reservedTokens(req, ctxFor(node, req.model)));
  return () => {
    capacityLease.release();
    nodeLease?.release();
  };
}

function decide(deps: AdmissionDeps, req: RouteRequest): RoutingDecision {
  return route(req, deps.registry.snapshot(), deps.filters, deps.policy);
}

function classify(deps: AdmissionDeps, req: RouteRequest, excluded: readonly Exclusion[]): UnroutableKind {
  return classifyUnroutable(excluded, mightFitLater(deps.registry.snapshot(), req));
}

export async function admit(deps: AdmissionDeps, req: RouteRequest, signal: AbortSignal, firstAttempt: boolean): Promise<Admission> {
  const started = deps.clock.monotonicMs();
  const waited = (): number => deps.clock.monotonicMs() - started;
  const queued = deps.queue.depth(req.model) > 0;
  if (!queued) {
    let decision = decide(deps, req);
    if (firstAttempt) deps.onDecision(req, decision);
    if (decision.kind === 'unroutable' && firstAttempt && classify(deps, req, decision.excluded) === 'unavailable') {
      if (await deps.onModelMiss(req)) decision = decide(deps, req);
    }
    if (decision.kind === 'selected') {
      return { kind: 'admitted', node: decision.node, waitedMs: 0, release: lease(deps, req, decision.node) };
    }
    const kind = classify(deps, req, decision.excluded);
    if (kind === 'unavailable') {
      const wake = deps.wakeFor(req);
      if (wake !== undefined) return holdForWake(deps, req, signal, wake.timeoutMs, decision.excluded);
    }
    if (kind !== 'busy') return { kind: 'refused', reason: kind, excluded: decision.excluded, waitedMs: 0 };
  }
  // Wait behind the requests already queued for this model (FIFO), however this one would route.
  return waitInQueue(deps, req, signal, {
    timeoutMs: deps.queueTimeoutMs(),
    timeoutReason: 'queue_timeout',
    keepWaiting: (kind) => kind === 'busy',
    initial: [],
  });
}

/**
 * Holds a request in its model's queue while an asleep node wakes: it is admitted as soon as
 * routing finds a node (the woken one, or any other that came back), or refused at the deadline.
 */
function holdForWake(
  deps: AdmissionDeps,
  req: RouteRequest,
  signal: AbortSignal,
  timeoutMs: number,
  initial: readonly Exclusion[],
): Promise<Admission> {
  return waitInQueue(deps, req, signal, {
    timeoutMs,
    timeoutReason: 'wake_timeout',
    keepWaiting: (kind) => kind !== 'too_large',
    initial,
  });
}

interface QueueWait {
  readonly timeoutMs: number;
  readonly timeoutReason: 'queue_timeout' | 'wake_timeout';
  /** Whether an unroutable verdict is worth waiting out (busy nodes; a node still waking). */
  readonly keepWaiting: (kind: UnroutableKind) => boolean;
  readonly initial: readonly Exclusion[];
}

/** Waits for a turn in the model's FIFO, re-routing at each wake-up, until admitted or refused. */
async function waitInQueue(deps: AdmissionDeps, req: RouteRequest, signal: AbortSignal, wait: QueueWait): Promise<Admission> {
  const started = deps.clock.monotonicMs();
  const waited = (): number => deps.clock.monotonicMs() - started;
  if (deps.queue.depth(req.model) >= deps.maxQueue()) {
    return { kind: 'refused', reason: 'queue_full', excluded: wait.initial, waitedMs: 0 };
  }
  const ticket = deps.queue.enter(req.model, wait.timeoutMs, signal);
  let excluded = wait.initial;
  try {
    for (;;) {
      const outcome = await ticket.wait();
      if (outcome === 'aborted') return { kind: 'refused', reason: 'aborted', excluded, waitedMs: waited() };
      if (outcome === 'timeout') return { kind: 'refused', reason: wait.timeoutReason, excluded, waitedMs: waited() };
      const decision = decide(deps, req);
      if (decision.kind === 'selected') {
        ticket.leave();
        // More capacity may have freed than this request needs: let the next one try too.
        deps.queue.wake(req.model);
        return { kind: 'admitted', node: decision.node, waitedMs: waited(), release: lease(deps, req, decision.node) };
      }
      excluded = decision.excluded;
      const kind = classify(deps, req, excluded);
      if (!wait.keepWaiting(kind)) return { kind: 'refused', reason: kind, excluded, waitedMs: waited() };
    }
  } finally {
    ticket.leave();
  }
}
