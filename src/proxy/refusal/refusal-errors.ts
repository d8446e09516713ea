// The 503 (nothing can take the request) and 502 (every node tried failed) answers, with the
// per-reason counts from the routing decision so the client can tell "down" from "not served".

import { GatewayError } from '#src/core/errors.ts';
import { countByCode, judgeModel, type Exclusion, type ModelVerdictInput, type SiteExclusion } from '#src/routing/index.ts';

/**
 * Nothing could take a request's first attempt: 404 model_not_found when no node's last listing
 * takes the name and no node that has never listed could (routing/unknown-model.ts; docs/config.md,
 * "Unknown and unavailable models"), else 503.
 */
export function nothingServes(
  input: ModelVerdictInput & {
    readonly excluded: readonly Exclusion[];
    readonly retryAfterSeconds: number;
    readonly siteExclusions?: readonly SiteExclusion[] | undefined;
    readonly endpoint?: string | undefined;
  },
): GatewayError {
  const verdict = judgeModel(input);
  if (verdict.kind === 'unknown') return unknownModel(input.requested, verdict.closest);
  if (input.endpoint !== undefined && onlyTheEndpointLacks(input.excluded) && (input.siteExclusions ?? []).length === 0) {
    return endpointUnsupported(input.requested, input.endpoint, input.excluded);
  }
  return noNodeAvailable(input.requested, input.excluded, input.retryAfterSeconds, input.siteExclusions);
}

/** Exclusions that say a node does not serve the model at all (so it is no candidate for the endpoint either). */
const NOT_SERVING_MODEL: readonly string[] = ['missing', 'not_allowed', 'empty', 'expired', 'group_mismatch'];

/** Every node that serves the model lacks the endpoint (and one does): waiting will not help. */
function onlyTheEndpointLacks(excluded: readonly Exclusion[]): boolean {
  const serving = excluded.filter((e) => !NOT_SERVING_MODEL.includes(e.code));
  return serving.length > 0 && serving.every((e) => e.code === 'endpoint_unsupported');
}

/**
 * 404: the nodes that serve the model do not serve this endpoint (their kinds' sets, `[[nodes]]
 * endpoints`, or a route-level 404 each answered). `excluded`: the routing exclusions (counted in the body).
 */
export function endpointUnsupported(model: string, endpoint: string, excluded: readonly Exclusion[] = []): GatewayError {
  const lacking = excluded
    .filter((e) => e.code === 'endpoint_unsupported')
    .map((e) => `${e.node}: ${e.detail ?? 'endpoint_unsupported'}`);
  const named = lacking.length === 0 ? '' : ` (${lacking.slice(0, 5).join('; ')})`;
  return new GatewayError('GW_MODEL_NOT_FOUND', `no node serving model '${model}' serves POST ${endpoint}${named}`, {
    status: 404,
    openaiType: 'invalid_request_error',
    openaiCode: 'endpoint_unsupported',
    details: { endpoint, exclusions: countByCode(excluded) },
  });
}

/** 404 model_not_found for a name no node takes, with the served names nearest to it. */
export function unknownModel(requested: string, closest: readonly string[]): GatewayError {
  const named = closest.length === 0 ? '' : ` Closest served models: ${closest.join(', ')}.`;
  return new GatewayError('GW_MODEL_NOT_FOUND', `The model '${requested}' does not exist: no node serves it.${named}`, {
    status: 404,
    openaiType: 'invalid_request_error',
    param: 'model',
    openaiCode: 'model_not_found',
    details: { closest_models: closest },
    model: requested,
  });
}

/** `sites` ([mesh] only): every pinned remote site with why it did not take the request, listed next to the nodes. */
export function noNodeAvailable(
  model: string,
  excluded: readonly Exclusion[],
  retryAfterSeconds: number,
  sites?: readonly SiteExclusion[],
): GatewayError {
  const counts = countByCode(excluded);
  const summary = Object.entries(counts)
    .map(([code, n]) => `${code}: ${n}`)
    .join(', ');
  const message =
    excluded.length === 0
      ? `no healthy node available for model '${model}': no nodes are configured`
      : `no healthy node available for model '${model}': ${excluded.length} excluded (${summary})`;
  const siteSummary =
    sites === undefined || sites.length === 0 ? '' : `; remote sites: ${sites.map((s) => `${s.site} ${s.code}`).join(', ')}`;
  return new GatewayError('GW_NO_AVAILABLE_NODE', message + siteSummary, {
    status: 503,
    openaiType: 'server_error',
    openaiCode: 'no_healthy_node',
    retryAfterSeconds,
    details:
      sites === undefined
        ? { exclusions: counts }
        : {
            exclusions: counts,
            sites: sites.map((s) => ({ site: s.site, reason: s.code, ...(s.detail === undefined ? {} : { detail: s.detail }) })),
          },
  });
}

/**
 * 503 that invites no retry: every node that could take the model is a router whose every slot is
 * held by pinned models, and nothing else could take it once something clears (routing's
 * `blocked`). No retry can succeed until the pins or the router's --models-max change, so there is
 * no Retry-After and `x-should-retry: false` (GatewayError.final). A 503, not a 4xx: the request is
 * right and the model is served here; the gateway's configuration keeps it from loading, which is
 * the operator's to fix, not the client's. A client held to a model scope is not told the routers'
 * names nor the pinned models (they may be outside its scope).
 */
export function blockedByPinnedModels(
  model: string,
  excluded: readonly Exclusion[],
  visible: ((name: string) => boolean) | undefined,
): GatewayError {
  const pinned = excluded.filter((e) => e.code === 'pinned');
  const where =
    visible === undefined
      ? pinned.map((e) => `router ${e.node}: ${e.detail ?? 'its slots are held by pinned models'}`).join('; ')
      : 'every router that serves it has its slots held by pinned models';
  const message = `model '${model}' cannot be loaded (${where}). Change [[models.available]] pin or the router's --models-max, or free a slot; retrying will not help until then.`;
  return new GatewayError('GW_NO_AVAILABLE_NODE', message, {
    status: 503,
    openaiType: 'server_error',
    openaiCode: 'blocked_by_pinned_models',
    final: true,
    details: visible === undefined ? { exclusions: countByCode(excluded), routers: pinned.map((e) => e.node) } : {},
  });
}

/** `sitesTried`: remote sites were tried after the nodes, and their failures are in the list too. */
export function allAttemptsFailed(
  model: string,
  failures: readonly string[],
  retryAfterSeconds: number,
  sitesTried = false,
): GatewayError {
  return new GatewayError(
    'GW_UPSTREAM_UNREACHABLE',
    `every ${sitesTried ? 'node and site' : 'node'} tried for model '${model}' failed before answering: ${failures.join('; ')}`,
    { status: 502, openaiType: 'server_error', openaiCode: 'upstream_failed', retryAfterSeconds },
  );
}

export function contextLengthExceeded(input: {
  readonly model: string;
  readonly promptTokens: number;
  readonly maxTokens: number | undefined;
  readonly largestContext: number;
  /** `promptTokens` is a proven lower bound, not a count: the message says "at least". */
  readonly atLeast?: boolean;
}): GatewayError {
  const completion = input.maxTokens ?? 0;
  const total = input.promptTokens + completion;
  const least = input.atLeast === true ? 'at least ' : '';
  const asked =
    completion > 0
      ? `your request needs ${least}${total} tokens (${least}${input.promptTokens} in the messages, ${completion} for the completion)`
      : input.atLeast === true
        ? `your messages need at least ${input.promptTokens} tokens`
        : `your messages resulted in ${input.promptTokens} tokens`;
  return new GatewayError(
    'GW_CONTEXT_LENGTH_EXCEEDED',
    `This model's maximum context length is ${input.largestContext} tokens. However, ${asked}. Please reduce the length of the messages${completion > 0 ? ' or completion' : ''}.`,
    {
      status: 400,
      openaiType: 'invalid_request_error',
      param: 'messages',
      openaiCode: 'context_length_exceeded',
      details: {
        model: input.model,
        prompt_tokens: input.promptTokens,
        ...(input.atLeast === true ? { prompt_tokens_at_least: true } : {}),
        max_context_tokens: input.largestContext,
      },
    },
  );
}

/** `waitingFor`: the switch a request timed out behind (a router's one switch at a time, [cluster]: naming the replica). */
export function queueRefused(
  model: string,
  reason: 'queue_full' | 'queue_timeout',
  waitedMs: number,
  waitingFor?: string,
): GatewayError {
  const behind = waitingFor === undefined ? '' : ` (waiting for a switch: ${waitingFor})`;
  const message =
    reason === 'queue_full'
      ? `too many requests are waiting for model '${model}'; try again shortly`
      : `no slot for model '${model}' became free within ${Math.round(waitedMs)}ms${behind}; try again shortly`;
  return new GatewayError('GW_QUEUE_REFUSED', message, {
    status: 429,
    openaiType: 'rate_limit_error',
    openaiCode: reason === 'queue_full' ? 'queue_full' : 'queue_timeout',
    retryAfterSeconds: 1,
  });
}

export function upstreamModelNotFound(model: string, upstreamMessage: string): GatewayError {
  return new GatewayError(
    'GW_MODEL_NOT_FOUND',
    `The model '${model}' does not exist on any node that was tried (${upstreamMessage}).`,
    {
      status: 404,
      openaiType: 'invalid_request_error',
      param: 'model',
      openaiCode: 'model_not_found',
      model,
    },
  );
}

export function wakeTimedOut(model: string, waitedMs: number, retryAfterSeconds: number): GatewayError {
  return new GatewayError(
    'GW_NO_AVAILABLE_NODE',
    `no node for model '${model}' woke up within ${Math.round(waitedMs / 1000)}s; try again shortly`,
    { status: 503, openaiType: 'server_error', openaiCode: 'wake_timeout', retryAfterSeconds },
  );
}

/** The model did not load on any node tried within routing.load_timeout. */
export function modelLoadTimedOut(model: string, failures: readonly string[], retryAfterSeconds: number): GatewayError {
  return new GatewayError(
    'GW_NO_AVAILABLE_NODE',
    `model '${model}' did not finish loading in time (${failures.join('; ')}); try again later`,
    { status: 503, openaiType: 'server_error', openaiCode: 'model_load_timeout', retryAfterSeconds },
  );
}
