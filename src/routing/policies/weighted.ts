// Weighted random: each candidate gets a share of requests proportional to its `[[nodes]] weight`
// (a node with weight 2 gets twice the traffic of one with weight 1). The random source is injected.

import type { NodeView } from '#src/nodes/index.ts';
import type { PolicyContext, SelectionPolicy } from './selection-policy.ts';
import type { RequestFeature } from './selection-policy.ts';

/** It reads no request feature: the candidates and the snapshot decide. */
export const WEIGHTED_READS: readonly RequestFeature[] = Object.freeze([]);

/** Pure: the candidate whose cumulative-weight interval contains `draw` (in [0, 1)). */
export function pickWeighted(candidates: readonly NodeView[], draw: number): NodeView | undefined {
  let total = 0;
  for (const node of candidates) total += node.spec.weight;
  let point = draw * total;
  for (const node of candidates) {
    point -= node.spec.weight;
    if (point < 0) return node;
  }
  return candidates[candidates.length - 1];
}

export function weighted(context: PolicyContext): SelectionPolicy {
  return {
    name: 'weighted',
    reads: WEIGHTED_READS,
    choose(_req, candidates) {
      const node = pickWeighted(candidates, context.random());
      if (node === undefined) return undefined;
      let total = 0;
      for (const c of candidates) total += c.spec.weight;
      // Lower is better: the candidate's share of traffic, negated.
      const scores = candidates.map((c) => -c.spec.weight / total);
      return { node, reason: `weight ${node.spec.weight} of ${total}`, scores };
    },
  };
}
