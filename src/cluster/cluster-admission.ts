// [cluster]: the scheduler's admission with a shared slot lease on top. The replica's own
// scheduler routes and claims its local lease as always (so its own queue order, classes and
// fair shares hold); then the node's slots are counted across replicas: the request waits in the
// (node, model)'s global queue for a store lease under the node's slot limit, within what is left
// of its queue timeout. The scheduler itself is not touched; without [cluster] this is not built.

import type { Clock } from '#src/core/clock.ts';
import { slotsFor } from '#src/capacity/index.ts';
import type { RouteRequest } from '#src/routing/index.ts';
import type { Admission, QueueSettings } from '#src/scheduler/index.ts';
import type { ClusterGate } from './cluster-gate.ts';

export interface Admitter {
  admit(req: RouteRequest, settings: QueueSettings, signal: AbortSignal, firstAttempt: boolean): Promise<Admission>;
}

/** `inner.admit` with the node's slots counted across replicas through `gate`. */
export function clusterAdmit(inner: Admitter, gate: Pick<ClusterGate, 'acquire'>, clock: Clock): Admitter['admit'] {
  return async (req, settings, signal, firstAttempt) => {
    const startedMs = clock.monotonicMs();
    const admitted = await inner.admit(req, settings, signal, firstAttempt);
    if (admitted.kind !== 'admitted') return admitted;
    // A node that says nothing of its slots has no limit to share (the local connection limit still applies).
    const limit = slotsFor(admitted.node, req.model);
    if (limit === undefined) return admitted;
    const pair = { node: admitted.node.spec.name, model: req.model };
    const outcome = await gate.acquire(pair, limit, startedMs + settings.queueTimeoutMs, signal);
    const waitedMs = clock.monotonicMs() - startedMs;
    if (outcome.kind === 'granted') {
      return { ...admitted, waitedMs, release: () => { outcome.release(); admitted.release(); } };
    }
    // The local lease goes back untouched by a request; a model load it would have started never began.
    admitted.load?.settle('failed');
    admitted.release();
    return { kind: 'refused', reason: outcome.kind === 'aborted' ? 'aborted' : 'queue_timeout', excluded: [{ node: pair.node, filter: 'cluster', code: 'no_slot', detail: `slots ${limit}/${limit} busy across the replicas` }], waitedMs };
  };
}
