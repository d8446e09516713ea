// Routing is a pure function of (request, snapshot): filters narrow the candidates, each drop with
// a reason, then the policy picks one. It never awaits anything.

import type { NodeView, RoutingSnapshot } from '#src/nodes/index.ts';
import type { Exclusion } from './exclusion.ts';
import type { Filter } from './filter.ts';
import type { PolicyChoice, SelectionPolicy } from './policies/selection-policy.ts';
import type { RouteRequest } from './route-request.ts';

export type RoutingDecision =
  | { readonly kind: 'selected'; readonly node: NodeView; readonly choice: PolicyChoice; readonly excluded: readonly Exclusion[] }
  | { readonly kind: 'unroutable'; readonly excluded: readonly Exclusion[] };

/** Runs the filters only: every node ends up either kept or excluded with its reason. */
export function filterCandidates(
  req: RouteRequest,
  snapshot: RoutingSnapshot,
  filters: readonly Filter[],
): { readonly kept: readonly NodeView[]; readonly excluded: readonly Exclusion[] } {
  let kept: readonly NodeView[] = snapshot.nodes;
  const excluded: Exclusion[] = [];
  for (const filter of filters) {
    if (kept.length === 0) break;
    const result = filter.apply(req, kept, snapshot);
    kept = result.kept;
    excluded.push(...result.excluded);
  }
  return { kept, excluded };
}

export function route(
  req: RouteRequest,
  snapshot: RoutingSnapshot,
  filters: readonly Filter[],
  policy: SelectionPolicy,
): RoutingDecision {
  const { kept, excluded } = filterCandidates(req, snapshot, filters);
  const choice = policy.choose(req, kept, snapshot);
  return choice === undefined ? { kind: 'unroutable', excluded } : { kind: 'selected', node: choice.node, choice, excluded };
}
