// The selection policies by name, and the one instance per gateway that routes each request by
// the policy its model asks for (`[routing] policy`, or the model's own `policy`).

import type { PolicyName } from '#src/config/index.ts';
import { affinity } from './affinity.ts';
import { leastInFlight } from './least-in-flight.ts';
import { leastLoaded } from './least-loaded.ts';
import { roundRobin } from './round-robin.ts';
import type { PolicyContext, SelectionPolicy } from './selection-policy.ts';
import { weighted } from './weighted.ts';

export type PolicyFactory = (context: PolicyContext) => SelectionPolicy;

export const POLICIES: Readonly<Record<PolicyName, PolicyFactory>> = Object.freeze({
  'least-loaded': (context: PolicyContext) => leastLoaded(context),
  'least-in-flight': () => leastInFlight(),
  'round-robin': () => roundRobin(),
  weighted: (context: PolicyContext) => weighted(context),
  affinity: (context: PolicyContext) => affinity(context),
});

export function createPolicy(name: PolicyName, context: PolicyContext): SelectionPolicy {
  return POLICIES[name](context);
}

/**
 * Dispatches on `req.policy`. Each named policy is built once, on first use, and keeps its own
 * state (rotation cursors) for the gateway's lifetime.
 */
export function policyPerRequest(context: PolicyContext): SelectionPolicy {
  const built = new Map<PolicyName, SelectionPolicy>();
  return {
    name: 'per-request',
    choose(req, candidates, snapshot) {
      let policy = built.get(req.policy);
      if (policy === undefined) {
        policy = createPolicy(req.policy, context);
        built.set(req.policy, policy);
      }
      return policy.choose(req, candidates, snapshot);
    },
  };
}
