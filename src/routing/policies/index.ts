// The selection policies by name, and the one set per gateway that routes each request by the
// policy its model asks for (`[routing] policy`, or the model's own `policy`).

import type { PolicyName } from '#src/config/index.ts';
import type { NodeView, RoutingSnapshot } from '#src/nodes/index.ts';
import type { RouteRequest } from '../route-request.ts';
import { affinity } from './affinity.ts';
import { cacheAware, type PrefixHitFigures } from './cache-aware.ts';
import { leastInFlight } from './least-in-flight.ts';
import { leastLoaded } from './least-loaded.ts';
import { roundRobin } from './round-robin.ts';
import type { PolicyChoice, PolicyContext, SelectionPolicy } from './selection-policy.ts';
import { weighted } from './weighted.ts';

export type PolicyFactory = (context: PolicyContext) => SelectionPolicy;

export const POLICIES: Readonly<Record<PolicyName, PolicyFactory>> = Object.freeze({
  'least-loaded': (context: PolicyContext) => leastLoaded(context),
  'least-in-flight': () => leastInFlight(),
  'round-robin': () => roundRobin(),
  weighted: (context: PolicyContext) => weighted(context),
  affinity: (context: PolicyContext) => affinity(context),
  'cache-aware': (context: PolicyContext) => cacheAware(context),
});

export function createPolicy(name: PolicyName, context: PolicyContext): SelectionPolicy {
  return POLICIES[name](context);
}

export interface PolicySet extends SelectionPolicy {
  /** What the request's policy would choose now, recording nothing (/admin/explain). */
  explain(req: RouteRequest, candidates: readonly NodeView[], snapshot: RoutingSnapshot): PolicyChoice | undefined;
  /** cache-aware's estimated prefix hits so far (zero while no model uses it). */
  prefixHits(): PrefixHitFigures;
}

/**
 * Dispatches on `req.policy`. Each named policy is built once, on first use, and keeps its own
 * state (rotation cursors, the prefix tree) for the gateway's lifetime.
 */
export function policyPerRequest(context: PolicyContext): PolicySet {
  const built = new Map<PolicyName, SelectionPolicy>();
  const cache = cacheAware(context);
  built.set('cache-aware', cache);
  const policyFor = (name: PolicyName): SelectionPolicy => {
    let policy = built.get(name);
    if (policy === undefined) {
      policy = createPolicy(name, context);
      built.set(name, policy);
    }
    return policy;
  };
  return {
    name: 'per-request',
    choose: (req, candidates, snapshot) => policyFor(req.policy).choose(req, candidates, snapshot),
    explain(req, candidates, snapshot) {
      const policy = policyFor(req.policy);
      if (policy.explain !== undefined) return policy.explain(req, candidates, snapshot);
      return createPolicy(req.policy, context).choose(req, candidates, snapshot);
    },
    prefixHits: () => cache.hits(),
  };
}
