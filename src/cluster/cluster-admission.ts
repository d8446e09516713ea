// [cluster]: the scheduler's admission with a shared slot lease on top. The replica's own
// scheduler routes and claims its local lease as always (so its own queue order, classes and
// fair shares hold); then the node's slots are counted across replicas: the request waits in the
// (node, model)'s global queue for a store lease under the node's slot limit, within what is left
// of its queue timeout. On a limited router the store also guards its one switch at a time
// (lua.ts ACQUIRE): a request that would make it load while another replica's switch is under
// way there is refused, learnt locally (one read of the switch claim) and routed again by the
// same deadline, so it waits behind that switch in this replica's queue. The scheduler itself is
// not touched; without [cluster] this is not built.

import type { Clock } from '#src/core/clock.ts';
import { slotsFor } from '#src/capacity/index.ts';
import type { RouteRequest } from '#src/routing/index.ts';
import type { Admission, QueueSettings } from '#src/scheduler/index.ts';
import type { ClusterGate } from './cluster-gate.ts';

export interface Admitter {
  admit(req: RouteRequest, settings: QueueSettings, signal: AbortSignal, firstAttempt: boolean): Admission | Promise<Admission>;
}

/** No slot figures on a limited router yet: its requests still pass the store (the switch guard), unlimited in number. */
const NO_SLOT_LIMIT = 1_000_000;

export interface SwitchLookout {
  /** Another replica's switch on `node` refused a request: the local view learns it (one store read); answers what it is. */
  seen(node: string): Promise<string | undefined>;
  /** The short fallback poll: how long a request refused twice in a row waits before it routes again. */
  readonly pollMs: number;
}

function pause(clock: Clock, ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      timer.cancel();
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = clock.setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/** Pure: a node's models_max when it is a limited router (0: not one; the switch guard does not apply). */
export function modelsMaxOf(node: {
  readonly capacity: { readonly role: string; readonly router?: { readonly maxInstances?: number } };
}): number {
  const max = node.capacity.role === 'router' ? node.capacity.router?.maxInstances : undefined;
  return max !== undefined && max > 0 ? max : 0;
}

/** Pure: what is left of a request's queue timeout after `waitedMs` (a request that routes again keeps its deadline). */
export function leftOf(settings: QueueSettings, waitedMs: number): QueueSettings {
  return { ...settings, queueTimeoutMs: Math.max(0, settings.queueTimeoutMs - waitedMs) };
}

/**
 * `inner.admit` with the node's slots counted across replicas through `gate`; a request another
 * replica's switch refuses (it would make the router load its model) routes again, by its deadline.
 */
export function clusterAdmit(
  inner: Admitter,
  gate: Pick<ClusterGate, 'acquire'>,
  clock: Clock,
  lookout?: SwitchLookout,
): Admitter['admit'] {
  return async (req, settings, signal, firstAttempt) => {
    const startedMs = clock.monotonicMs();
    for (let round = 0; ; round += 1) {
      const left = leftOf(settings, clock.monotonicMs() - startedMs);
      const admitted = await inner.admit(req, left, signal, firstAttempt && round === 0);
      if (admitted.kind !== 'admitted')
        return round === 0 ? admitted : { ...admitted, waitedMs: clock.monotonicMs() - startedMs };
      const max = modelsMaxOf(admitted.node);
      // A node that says nothing of its slots has no limit to share (the local connection limit still applies).
      const limit = slotsFor(admitted.node, req.model) ?? (max > 0 ? NO_SLOT_LIMIT : undefined);
      if (limit === undefined) return admitted;
      const pair = { node: admitted.node.spec.name, model: req.model };
      const outcome = await gate.acquire(pair, limit, startedMs + settings.queueTimeoutMs, signal, max);
      const waitedMs = clock.monotonicMs() - startedMs;
      if (outcome.kind === 'granted') {
        return {
          ...admitted,
          waitedMs,
          release: () => {
            outcome.release();
            admitted.release();
          },
        };
      }
      // The local lease goes back untouched by a request; a model load it would have started never began.
      admitted.load?.settle('failed');
      admitted.release();
      if (outcome.kind === 'switching') {
        const what = (await lookout?.seen(pair.node)) ?? "another replica's switch";
        // Refused again: the view and the store disagree for now (a listing catching up); one short poll before the next try.
        if (round > 0) await pause(clock, lookout?.pollMs ?? 0, signal);
        if (clock.monotonicMs() - startedMs < settings.queueTimeoutMs && !signal.aborted) continue;
        return {
          kind: 'refused',
          reason: signal.aborted ? 'aborted' : 'queue_timeout',
          excluded: [
            {
              node: pair.node,
              filter: 'cluster',
              code: 'switching',
              detail: `${what}: this request would make the router load ${req.model}; one switch at a time`,
            },
          ],
          waitedMs,
        };
      }
      return {
        kind: 'refused',
        reason: outcome.kind === 'aborted' ? 'aborted' : 'queue_timeout',
        excluded: [
          { node: pair.node, filter: 'cluster', code: 'no_slot', detail: `slots ${limit}/${limit} busy across the replicas` },
        ],
        waitedMs,
      };
    }
  };
}
