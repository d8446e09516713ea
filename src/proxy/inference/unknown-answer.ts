// The answer for a request a gate answers as an unknown model (request-feature.ts,
// AnsweredAsUnknown: a model outside a tenant's scope): routed, waited for and refused exactly as
// a model no node serves — under a name no node lists, so the scheduler treats it as any unknown
// model (a listing refresh on a miss, the same wait, the same exclusions) — the later sources
// asked as for an unknown model, and the 404's suggestions only from the names it may be told of.
// Nothing is ever sent to a node or a site.

import type { AdmissionPort } from '#src/ports/index.ts';
import type { RouteRequest } from '#src/routing/index.ts';
import type { Admission, QueueSettings } from '#src/scheduler/index.ts';
import { startFailover } from '../failover/failover-state.ts';
import type { FeatureSource } from '../feature/request-feature.ts';
import { respondRefused, type RefusalContext, type RefusalDeps } from '../refusal/respond-refused.ts';

/** The name such a request is routed as: one no node lists. */
export const UNKNOWN_TO_CALLER = '\u0000out-of-scope';

export interface UnknownAnswer extends Pick<RefusalContext, 'requestedModel' | 'retryAfterSeconds' | 'fail' | 'finish'> {
  readonly visible: (name: string) => boolean;
  readonly routeRequest: RouteRequest;
  readonly settings: QueueSettings;
  readonly signal: AbortSignal;
  /** The later sources, built for the hidden name: each is asked once, as for an unknown model. */
  readonly sources: readonly FeatureSource[];
}

export async function answerAsUnknown(
  deps: RefusalDeps & { readonly admission: Pick<AdmissionPort, 'admit'> },
  a: UnknownAnswer,
): Promise<void> {
  const admission = await admitAsUnknown(deps.admission, a.routeRequest, a.settings, a.signal);
  const state = startFailover(a.routeRequest);
  for (const source of a.sources) await source.next(state);
  respondRefused(deps, {
    admission,
    requestedModel: a.requestedModel,
    retryAfterSeconds: a.retryAfterSeconds,
    visible: a.visible,
    fail: a.fail,
    finish: a.finish,
    model: UNKNOWN_TO_CALLER,
    state,
    sites: a.sources[0]?.verdicts(state.failures),
    outOfScope: true,
  });
}

/** Routes the request as an unknown model; an admission (a node that takes any name) is given back at once. */
async function admitAsUnknown(
  admission: Pick<AdmissionPort, 'admit'>,
  routeRequest: RouteRequest,
  settings: QueueSettings,
  signal: AbortSignal,
): Promise<Extract<Admission, { kind: 'refused' }>> {
  const admitted = await admission.admit({ ...routeRequest, model: UNKNOWN_TO_CALLER, group: undefined }, settings, signal, true);
  if (admitted.kind === 'refused') return admitted;
  admitted.release();
  admitted.load?.settle('failed');
  return { kind: 'refused', reason: 'unavailable', excluded: [], waitedMs: admitted.waitedMs };
}
