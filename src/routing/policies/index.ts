// The selection policies by name, and the one set per gateway that routes each request by the
// policy its model asks for (`[routing] policy`, or the model's own `policy`).

import type { PolicyName } from '#src/config/index.ts';
import type { NodeView, RoutingSnapshot } from '#src/nodes/index.ts';
import type { RouteRequest } from '../route-request.ts';
import { affinity, AFFINITY_READS } from './affinity.ts';
import { cacheAware, CACHE_AWARE_READS, type PrefixHitFigures } from './cache-aware.ts';
import { leastInFlight, LEAST_IN_FLIGHT_READS } from './least-in-flight.ts';
import { leastLoaded, LEAST_LOADED_READS } from './least-loaded.ts';
import { roundRobin, ROUND_ROBIN_READS } from './round-robin.ts';
import type {
  FeatureReaders,
  PolicyChoice,
  PolicyContext,
  RequestFeature,
  RequestFeatures,
  SelectionPolicy,
} from './selection-policy.ts';
import { answerOwner, keepingSessions, keepSessionOn, learnResponse, rememberedNode, withSessionReads } from './sessions.ts';
import { weighted, WEIGHTED_READS } from './weighted.ts';

export type PolicyFactory = (context: PolicyContext) => SelectionPolicy;

/**
 * A registered policy: how to build its own choice, whether sessions are kept in front of it, and
 * the request features it reads (its `reads`, known before it is built; the session layer's included).
 */
export interface PolicyEntry {
  readonly reads: readonly RequestFeature[];
  /** The policy's own choice (for a load-balancing one, what the session layer falls back to). */
  readonly create: PolicyFactory;
  /** Sessions are kept on their node in front of the policy's own choice (sessions.ts). */
  readonly sessions?: true;
}

// The load-balancing policies keep sessions on their node in front of their own choice
// (sessions.ts); affinity and cache-aware route by their own key.
export const POLICIES: Readonly<Record<PolicyName, PolicyEntry>> = Object.freeze({
  'least-loaded': {
    reads: withSessionReads(LEAST_LOADED_READS),
    sessions: true,
    create: (context: PolicyContext) => leastLoaded(context),
  },
  'least-in-flight': { reads: withSessionReads(LEAST_IN_FLIGHT_READS), sessions: true, create: () => leastInFlight() },
  'round-robin': { reads: withSessionReads(ROUND_ROBIN_READS), sessions: true, create: () => roundRobin() },
  weighted: { reads: withSessionReads(WEIGHTED_READS), sessions: true, create: (context: PolicyContext) => weighted(context) },
  affinity: { reads: AFFINITY_READS, create: (context: PolicyContext) => affinity(context) },
  'cache-aware': { reads: CACHE_AWARE_READS, create: (context: PolicyContext) => cacheAware(context) },
});

/** One policy as built, and what a request naming neither a session nor a previous answer is chosen by. */
interface BuiltPolicy {
  readonly policy: SelectionPolicy;
  /**
   * The policy's own choice: the session layer (sessions.ts) decides nothing for such a request, so
   * it is not entered (the same instance the layer falls back to: one rotation, one state).
   */
  readonly plain: SelectionPolicy;
}

function build(name: PolicyName, context: PolicyContext): BuiltPolicy {
  const entry = POLICIES[name];
  if (entry.sessions !== true) {
    const policy = entry.create(context);
    return { policy, plain: policy };
  }
  const layer = keepingSessions(() => entry.create(context), context);
  return { policy: layer, plain: layer.inner };
}

export function createPolicy(name: PolicyName, context: PolicyContext): SelectionPolicy {
  return build(name, context).policy;
}

/**
 * The features a request routed by `policy` needs, read with the request path's readers: only
 * those the policy reads are read, once each (each parses the body), so the caller never names a policy.
 */
export function requestFeaturesFor(policy: PolicyName, readers: FeatureReaders): RequestFeatures {
  // Made by the first feature the request has: a plain request (none) shares one empty object.
  let features: { -readonly [F in RequestFeature]?: string } | undefined;
  // An index loop: iterating the frozen list allocated an iterator and its results per request.
  const reads = POLICIES[policy].reads;
  for (let i = 0; i < reads.length; i += 1) {
    const feature = reads[i] as RequestFeature;
    const value = readers[feature]();
    if (value !== undefined) (features ??= {})[feature] = value;
  }
  return features ?? NO_FEATURES;
}

/** The features of a request that has none of those its policy reads (most requests). */
const NO_FEATURES: RequestFeatures = Object.freeze({});

export interface PolicySet extends SelectionPolicy {
  /** What the request's policy would choose now, recording nothing (/admin/explain). */
  explain(req: RouteRequest, candidates: readonly NodeView[], snapshot: RoutingSnapshot): PolicyChoice | undefined;
  /** cache-aware's estimated prefix hits so far (zero while no model uses it). */
  prefixHits(): PrefixHitFigures;
  /** The node a request's session is remembered on, if any (explain). */
  sessionNode(req: RouteRequest, now: number): string | undefined;
  /** A remote site (siteSessionTarget) served the request's session's turn: its next turns go back there while it can take them. */
  keepSession(req: RouteRequest, target: string, now: number): void;
  /** `node` produced the answer `answerId` for `tenant`: a `previous_response_id` naming it goes back there. */
  learnAnswer(tenant: string, answerId: string, node: string, now: number): void;
  /** The node that produced the answer `answerId` (or holds a conversation's stream) for `tenant`, if remembered; [cluster]: read from the store when not held here. */
  answerOwner(tenant: string, answerId: string, now: number): string | undefined | Promise<string | undefined>;
}

/**
 * Dispatches on `req.policy`. Each named policy is built once, on first use, and keeps its own
 * state (rotation cursors, the prefix tree) for the gateway's lifetime.
 */
export function policyPerRequest(context: PolicyContext): PolicySet {
  const built = new Map<PolicyName, BuiltPolicy>();
  const cache = cacheAware(context);
  built.set('cache-aware', { policy: cache, plain: cache });
  const builtFor = (name: PolicyName): BuiltPolicy => {
    let policy = built.get(name);
    if (policy === undefined) {
      policy = build(name, context);
      built.set(name, policy);
    }
    return policy;
  };
  return {
    name: 'per-request',
    // Whatever the request's own policy reads (requestFeaturesFor).
    reads: [...new Set(Object.values(POLICIES).flatMap((entry) => entry.reads))],
    // The built policy read straight from the map: one call per decision, not two. A request naming
    // neither a session nor a previous answer goes straight to the policy's own choice.
    choose(req, candidates, snapshot) {
      const { policy, plain } = built.get(req.policy) ?? builtFor(req.policy);
      return (req.sessionKey === undefined && req.previousResponseId === undefined ? plain : policy).choose(
        req,
        candidates,
        snapshot,
      );
    },
    explain(req, candidates, snapshot) {
      const policy = builtFor(req.policy).policy;
      if (policy.explain !== undefined) return policy.explain(req, candidates, snapshot);
      return createPolicy(req.policy, context).choose(req, candidates, snapshot);
    },
    prefixHits: () => cache.hits(),
    sessionNode: (req, now) => rememberedNode(req, context, now),
    keepSession: (req, target, now) => keepSessionOn(req, context, target, now),
    learnAnswer: (tenant, answerId, node, now) => learnResponse(context, tenant, answerId, node, now),
    answerOwner: (tenant, answerId, now) => answerOwner(context, tenant, answerId, now),
  };
}
