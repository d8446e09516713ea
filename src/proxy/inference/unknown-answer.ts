// The answer for a request a gate answers as an unknown model (request-feature.ts,
// AnsweredAsUnknown: a model outside a tenant's scope): routed, waited for and refused exactly as
// a model no node serves — under a name no node lists, so the scheduler treats it as any unknown
// model (a listing refresh on a miss, the same wait, the same exclusions) — the later sources
// asked as for an unknown model, and the 404's suggestions only from the names it may be told of.
// Nothing is ever sent to a node or a site.

import type { AdmissionPort } from '#src/ports/index.ts';
import type { RouteRequest } from '#src/routing/index.ts';
import type { Admission, QueueSettings } from '#src/scheduler/index.ts';
import { startFailover } from '../failover/attempt-feedback.ts';
import type { AnsweredAsUnknown, SourceAsk } from '../feature/request-feature.ts';
import { respondRefused } from '../refusal/respond-refused.ts';
import type { RequestReport } from '../request/request-report.ts';
import type { InferenceDeps } from './inference-deps.ts';
import { refusalDeps, type Fail } from './inference-steps.ts';

/** The name such a request is routed as: one no node lists. */
export const UNKNOWN_TO_CALLER = '\u0000out-of-scope';

export interface UnknownAnswer {
  /** The request as routed (its real model's facts; admitted under the hidden name). */
  readonly routeRequest: RouteRequest;
  readonly ask: SourceAsk;
  /** The gate's verdict: the names its 404's suggestions may show. */
  readonly verdict: AnsweredAsUnknown;
  readonly fail: Fail;
  readonly report: RequestReport;
}

export async function answerAsUnknown(deps: InferenceDeps, a: UnknownAnswer): Promise<void> {
  const { settings, signal, resolved } = a.ask;
  const admission = await admitAsUnknown(deps.admission, a.routeRequest, settings, signal);
  const state = startFailover(a.routeRequest);
  // The later sources (the remote sites) are asked as for an unknown model: none lists the hidden
  // name, so none is chosen, and what they said and list shapes the 404 as an unknown model's.
  const hidden = { ...a.ask, resolved: { ...resolved, model: UNKNOWN_TO_CALLER } };
  const sources = deps.hooks.sources.map((source) => source(hidden));
  for (const source of sources) await source.next(state);
  respondRefused(refusalDeps(deps), {
    admission,
    model: UNKNOWN_TO_CALLER,
    requestedModel: resolved.requestedModel,
    state,
    retryAfterSeconds: settings.retryAfterSeconds,
    sites: sources[0]?.verdicts(state.failures),
    visible: a.verdict.visible,
    answerAs: a.verdict.kind,
    fail: a.fail,
    finish: (node, status, extra) => a.report.finish(node, status, extra),
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
