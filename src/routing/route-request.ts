// What routing needs to know about one request, and the one place it is built (`routeRequestFor`,
// for the request path and /admin/explain alike, so the explanation always judges what a request
// would be judged by). Its model is the served model id its name stands for (`servedModelName`, below).

import type { InferenceEndpoint, NodeKind, PolicyName } from '#src/config/index.ts';
import type { TenantPriority } from '#src/core/tenant-class.ts';
import { serverKind, type ListedNames } from '#src/kinds/index.ts';

/** Whose request this is, as every model's queue orders it (plain data: it crosses to the lease owner). */
export interface QueueTenant {
  readonly name: string;
  readonly priority: TenantPriority;
  /** Its share of its class against the class's other tenants. */
  readonly weight: number;
}

/** No node tried yet: one shared empty set for every first attempt (read only: a failover copies it). */
export const NO_TRIED_NODES: ReadonlySet<string> = new Set<string>();

export interface RouteRequest {
  /** The served model id (aliases already resolved). */
  readonly model: string;
  /** The model's group from [[models.available]]; undefined = nodes without a group. */
  readonly group: string | undefined;
  /** Nodes already attempted for this request (failover never returns to them). */
  readonly triedNodes: ReadonlySet<string>;
  /** Prompt size in tokens: an upper bound (bytes, a learned ratio or a tokenizer's count); undefined = not checked. */
  readonly promptTokens: number | undefined;
  /**
   * A proven lower bound on the prompt's tokens (docs/config.md, "Prompt size"); absent = the same
   * as `promptTokens`. Only a context smaller than this refuses the request; between the two, the
   * node decides.
   */
  readonly minPromptTokens?: number | undefined;
  /** The request's own max_tokens / max_completion_tokens, if any. */
  readonly maxTokens: number | undefined;
  /** Tokens to reserve for the answer when max_tokens is absent (context budget only). */
  readonly completionReserveTokens: number;
  /** Whether nodes that would load the model on demand may be used. */
  readonly loadOnDemand: boolean;
  /** The selection policy for this request's model. */
  readonly policy: PolicyName;
  /** What the `affinity` policy hashes (a session header, the `user` field or the prompt's start); absent = none. */
  readonly affinityKey?: string | undefined;
  /**
   * The session the request belongs to, as `source\nvalue` (`sessionFeature` below; policies/sessions.ts:
   * what agents send, e.g. Claude Code's `x-claude-code-session-id`); absent = a plain request, or
   * `[routing] sessions = false`.
   */
  readonly sessionKey?: string | undefined;
  /**
   * [mesh]: why the session's remembered site did not take this turn (it turned stale, no longer
   * serves the model, failed this request): the session moved back to the local nodes. Absent = its
   * session is not on a site.
   */
  readonly sessionSiteLeft?: string | undefined;
  /** The body's `previous_response_id` (OpenAI Responses): the answer whose node holds the conversation; absent = none. */
  readonly previousResponseId?: string | undefined;
  /** What the `cache-aware` policy matches: the prompt's text from its start; absent = none. */
  readonly promptPrefix?: string | undefined;
  /** The tenant the request is admitted as; absent = the open `default` tenant (standard, weight 1). */
  readonly tenant?: QueueTenant | undefined;
  /** The endpoint asked (its path); absent = any node may take it (the endpoint_unsupported filter passes every node). */
  readonly endpoint?: InferenceEndpoint | undefined;
}

/** Tokens the request needs in one slot's context: the prompt plus its answer (at least one token). */
export function neededTokens(req: Pick<RouteRequest, 'promptTokens' | 'maxTokens'>): number {
  return (req.promptTokens ?? 0) + Math.max(1, req.maxTokens ?? 1);
}

/** Tokens the request needs at least in one slot's context: the prompt's lower bound plus its answer. */
export function minNeededTokens(req: Pick<RouteRequest, 'promptTokens' | 'minPromptTokens' | 'maxTokens'>): number {
  return Math.min(req.minPromptTokens ?? req.promptTokens ?? 0, req.promptTokens ?? 0) + Math.max(1, req.maxTokens ?? 1);
}

/** Tokens the request holds of a shared KV pool while in flight, never more than the context. */
export function reservedTokens(req: RouteRequest, ctx: number): number {
  const wanted = (req.promptTokens ?? 0) + (req.maxTokens ?? req.completionReserveTokens);
  return ctx > 0 ? Math.min(wanted, ctx) : wanted;
}

/**
 * A session key as the request feature carries it (`RouteRequest.sessionKey`): its source (a
 * header's name or a body field) and its value.
 */
export function sessionFeature(key: { readonly source: string; readonly value: string } | undefined): string | undefined {
  return key === undefined ? undefined : `${key.source}\n${key.value}`;
}

/** The source and value of a `RouteRequest.sessionKey` (`sessionFeature`'s inverse). */
export function sessionKeyParts(feature: string): { readonly source: string; readonly value: string } {
  const cut = feature.indexOf('\n');
  return cut < 0 ? { source: 'session', value: feature } : { source: feature.slice(0, cut), value: feature.slice(cut + 1) };
}

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

/** The RouteRequest of a request's facts under its settings snapshot (the one builder: see the header). */
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

// ---- the served model id ----
// Pure: which listed model a request's name stands for (RouteRequest.model), fleet-wide. Each node
// resolves the name the way its kind of server does (ServerKind.resolveModelName: Ollama's implicit
// `:latest`, a llama-server's aliases, …); routing then runs on that id, so every node it picks lists
// it and is sent the name it listed. Unknown-model answers and their suggestions read the same resolution.

/** What resolution reads of a node (NodeView fits). */
export interface NamedNode {
  readonly spec: { readonly kind: NodeKind };
  readonly modelsById: ListedNames;
}

/**
 * The id routing uses for `requested`: the name itself when some node lists it as it is (an exact
 * id never loses to another node's alias); else the id the most nodes resolve it to (ties: the
 * first in sort order, so every gateway and worker picks the same); else `requested` unchanged —
 * nothing serves it, and the unknown-model verdict says so. `offering`: the nodes that may list
 * `requested` (nodes/model-offers.ts; any superset of those listing it), read first so that the
 * common case, a listed id, does not scan the fleet.
 */
export function servedModelName(requested: string, nodes: readonly NamedNode[], offering: readonly NamedNode[] = nodes): string {
  // A plain loop (no closure): this runs on every request.
  for (let i = 0; i < offering.length; i += 1) if ((offering[i] as NamedNode).modelsById.has(requested)) return requested;
  const votes = new Map<string, number>();
  for (const node of nodes) {
    const id = serverKind(node.spec.kind).resolveModelName(requested, node.modelsById);
    if (id !== undefined) votes.set(id, (votes.get(id) ?? 0) + 1);
  }
  let best: { id: string; count: number } | undefined;
  for (const [id, count] of votes) {
    if (best === undefined || count > best.count || (count === best.count && id < best.id)) best = { id, count };
  }
  return best?.id ?? requested;
}

/** Whether any node would take `requested` under its kind's rules. */
export function anyNodeResolves(requested: string, nodes: readonly NamedNode[]): boolean {
  return nodes.some((node) => serverKind(node.spec.kind).resolveModelName(requested, node.modelsById) !== undefined);
}
