// Pure: how a request no target served is answered — one decision for nodes and sites alike: the
// admission's refusal (queue full or timed out, a wake that timed out, a prompt too large) or,
// after attempts, what the targets said (context overflow, unknown model, a load that timed out,
// every target failed, each in the one failures list), or — for a first attempt nothing could take
// — 404 for a model no node's last listing has (nor any remote site: routing/unknown-model.ts), 503
// otherwise, with the node exclusions counted and the site exclusions listed beside them. A name a
// gate answers as unknown (a tenant's scope) is always that 404: nothing about the fleet is told.

import type { GatewayError } from '#src/core/errors.ts';
import type { RoutingSnapshot } from '#src/nodes/index.ts';
import { largestContext, unknownVerdict, type SiteExclusion } from '#src/routing/index.ts';
import type { Admission } from '#src/scheduler/index.ts';
import type { FailoverState } from '../failover/attempt-feedback.ts';
import { refusalFigure } from '../request/prompt-size.ts';
import {
  allAttemptsFailed,
  blockedByPinnedModels,
  contextLengthExceeded,
  endpointUnsupported,
  modelLoadTimedOut,
  nothingServes,
  queueRefused,
  unknownModel,
  upstreamModelNotFound,
  wakeTimedOut,
} from './refusal-errors.ts';
import { failureLine } from '../failover/target.ts';

/** What the remote sites said about a request no local node served ([mesh] only). */
export interface SiteVerdicts {
  /** Why each pinned site did not serve it: listed next to the nodes in 503 bodies. */
  readonly excluded: readonly SiteExclusion[];
  /** Models remote sites list, or listed within REMEMBERED_MS: such a model is never answered 404. */
  readonly models: ReadonlySet<string>;
}

export interface RefusalFacts {
  /** Why the scheduler admitted no (further) node. */
  readonly admission: Extract<Admission, { kind: 'refused' }>;
  /** The served model id and the name the client asked for. */
  readonly model: string;
  readonly requestedModel: string;
  /** What the failover loop learned: the targets tried and why each failed, the last refusal, the prompt's bounds. */
  readonly state: FailoverState;
  readonly retryAfterSeconds: number;
  /** The fleet, read only by the answers that name it (the largest context; the 404 rule). */
  readonly snapshot: () => RoutingSnapshot;
  readonly sites?: SiteVerdicts | undefined;
  /** The model names the caller may be told of (a gate's verdict); absent = every name. */
  readonly visible?: ((name: string) => boolean) | undefined;
  /**
   * 'unknown': a gate's verdict (AnsweredAsUnknown) — the name is answered as one no node serves,
   * whatever the admission said and whatever the fleet lists; absent = as the admission and fleet say.
   */
  readonly answerAs?: 'unknown' | undefined;
}

export type RefusalAnswer =
  /** The client left: nothing is sent, the request is reported 499. */
  | { readonly kind: 'client_gone' }
  /** `counted`: the answer is one of those counted apart (gateway_context_rejected_total, unroutable requests). */
  | {
      readonly kind: 'error';
      readonly error: GatewayError;
      readonly counted?: 'context_rejected' | 'model_not_found' | 'no_healthy_node';
    };

/** Why a remote site did not take a request that no wait changes (any other reason may clear: stale, unreachable, tried). */
const SITE_LASTING: ReadonlySet<string> = new Set(['missing', 'too_small', 'forwarded', 'not_in_tenant_scope']);

export function refusalAnswer(f: RefusalFacts): RefusalAnswer {
  const { admission, requestedModel: requested } = f;
  const { routeRequest, lastRefusal } = f.state;
  if (admission.reason === 'aborted') return { kind: 'client_gone' };
  if (f.answerAs === 'unknown') return answer(unknownToCaller(f), 'model_not_found');
  if (admission.reason === 'queue_full' || admission.reason === 'queue_timeout') {
    const switching = admission.excluded.find((e) => e.code === 'switching')?.detail;
    return answer(
      queueRefused(requested, admission.reason, admission.waitedMs, admission.reason === 'queue_timeout' ? switching : undefined),
    );
  }
  if (admission.reason === 'wake_timeout') return answer(wakeTimedOut(requested, admission.waitedMs, f.retryAfterSeconds));
  if (admission.reason === 'too_large' || lastRefusal?.kind === 'context_overflow') {
    const largest = largestContext(f.snapshot(), f.model);
    const figure = refusalFigure({
      lower: routeRequest.minPromptTokens ?? routeRequest.promptTokens ?? 0,
      upper: routeRequest.promptTokens ?? 0,
    });
    const error = contextLengthExceeded({
      model: requested,
      promptTokens: figure.tokens,
      atLeast: figure.atLeast,
      maxTokens: routeRequest.maxTokens,
      largestContext: largest > 0 ? largest : lastRefusal?.kind === 'context_overflow' ? (lastRefusal.nCtx ?? 0) : 0,
    });
    return answer(error, 'context_rejected');
  }
  if (lastRefusal?.kind === 'model_not_found') return answer(upstreamModelNotFound(requested, lastRefusal.message));
  // Every node tried answered a route-level 404: none left that serves the endpoint.
  if (lastRefusal?.kind === 'endpoint_missing' && f.state.failures.every((failure) => failure.code === 'refused')) {
    return answer(
      endpointUnsupported(requested, routeRequest.endpoint ?? 'this endpoint', admission.excluded),
      'no_healthy_node',
    );
  }
  // Routers full of pinned models and nothing else that could take it once something clears: say
  // what blocks it and invite no retry — unless a remote site might still take it later.
  if (
    admission.reason === 'blocked' &&
    routeRequest.triedNodes.size === 0 &&
    (f.sites?.excluded ?? []).every((e) => SITE_LASTING.has(e.code))
  ) {
    return answer(blockedByPinnedModels(requested, admission.excluded, f.visible), 'no_healthy_node');
  }
  const failures = f.state.failures.map(failureLine);
  if (f.state.loadTimedOut) return answer(modelLoadTimedOut(requested, failures, f.retryAfterSeconds));
  if (routeRequest.triedNodes.size > 0)
    return answer(allAttemptsFailed(requested, failures, f.retryAfterSeconds, f.state.triedSites.size > 0));
  const error = nothingServes({
    nodes: f.snapshot().nodes,
    model: f.model,
    requested,
    excluded: admission.excluded,
    retryAfterSeconds: f.retryAfterSeconds,
    remoteModels: f.sites?.models,
    siteExclusions: f.sites?.excluded,
    visible: f.visible,
    endpoint: routeRequest.endpoint,
  });
  return answer(error, error.status === 404 ? 'model_not_found' : 'no_healthy_node');
}

/** The 404 of a name answered as unknown: the unknown model's body, its suggestions only from the visible names. */
function unknownToCaller(f: RefusalFacts): GatewayError {
  const { closest } = unknownVerdict({
    nodes: f.snapshot().nodes,
    requested: f.requestedModel,
    remoteModels: f.sites?.models,
    visible: f.visible,
  });
  return unknownModel(f.requestedModel, closest);
}

function answer(error: GatewayError, counted?: 'context_rejected' | 'model_not_found' | 'no_healthy_node'): RefusalAnswer {
  return counted === undefined ? { kind: 'error', error } : { kind: 'error', error, counted };
}
