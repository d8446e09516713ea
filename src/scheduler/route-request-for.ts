// The one place a routing request (`RouteRequest`) is built, for the request path and for
// /admin/explain alike, so the explanation always judges what a request would be judged by.

import type { InferenceEndpoint, PolicyName } from '#src/config/index.ts';
import { NO_TRIED_NODES, type QueueTenant, type RouteRequest } from '#src/routing/index.ts';

/** The settings routing needs, read from one settings snapshot per request. */
export interface RoutingSettings {
  readonly completionReserveTokens: number;
  readonly loadOnDemand: boolean;
  /** `[routing] policy`: for models without their own. */
  readonly policy: PolicyName;
}

export interface RequestFacts {
  /** The served model id (aliases already resolved). */
  readonly model: string;
  readonly group: string | undefined;
  readonly promptTokens: number | undefined;
  /** The prompt's proven lower bound; absent = `promptTokens` is exact. */
  readonly minPromptTokens?: number | undefined;
  readonly maxTokens: number | undefined;
  /** The model's own policy from [[models.available]], if it declares one. */
  readonly policy?: PolicyName | undefined;
  /** The `affinity` policy's key, when the request has one. */
  readonly affinityKey?: string | undefined;
  /** The request's session (`source\nvalue`) and its `previous_response_id`, for the sessions kept in front of the policy. */
  readonly sessionKey?: string | undefined;
  readonly previousResponseId?: string | undefined;
  /** The prompt's start, for the `cache-aware` policy. */
  readonly promptPrefix?: string | undefined;
  /** The tenant the request is admitted as (its queue class and weight); absent = the open `default`. */
  readonly tenant?: QueueTenant | undefined;
}

export function routeRequestFor(facts: RequestFacts, settings: RoutingSettings, endpoint?: InferenceEndpoint): RouteRequest {
  // One object, its optional fields set only when present (absent, not undefined): a spread per
  // field would copy the object each time, on every request.
  const req: Mutable<RouteRequest> = {
    model: facts.model,
    group: facts.group,
    triedNodes: NO_TRIED_NODES,
    promptTokens: facts.promptTokens,
    maxTokens: facts.maxTokens,
    completionReserveTokens: settings.completionReserveTokens,
    loadOnDemand: settings.loadOnDemand,
    policy: facts.policy ?? settings.policy,
  };
  if (facts.minPromptTokens !== undefined) req.minPromptTokens = facts.minPromptTokens;
  if (facts.affinityKey !== undefined) req.affinityKey = facts.affinityKey;
  if (facts.promptPrefix !== undefined) req.promptPrefix = facts.promptPrefix;
  if (facts.sessionKey !== undefined) req.sessionKey = facts.sessionKey;
  if (facts.previousResponseId !== undefined) req.previousResponseId = facts.previousResponseId;
  if (facts.tenant !== undefined) req.tenant = facts.tenant;
  if (endpoint !== undefined) req.endpoint = endpoint;
  return req;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
