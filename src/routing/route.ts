// Routing is a pure function of (request, snapshot): filters narrow the candidates, each drop with
// a reason, then the policy picks one. It never awaits anything.

import type { NodeView, RoutingSnapshot } from '#src/nodes/index.ts';
import type { Exclusion } from './exclusion.ts';
import type { Filter } from './filter.ts';
import type { PolicyChoice, SelectionPolicy } from './policies/selection-policy.ts';
import type { RouteRequest } from './route-request.ts';
import type { RouteIndex } from './route-index.ts';

export type RoutingDecision =
  | {
      readonly kind: 'selected';
      readonly node: NodeView;
      readonly choice: PolicyChoice;
      readonly excluded: readonly Exclusion[];
      /** The candidates the policy chose among, aligned with `choice.scores`. */
      readonly candidates: readonly NodeView[];
    }
  | { readonly kind: 'unroutable'; readonly excluded: readonly Exclusion[] };

/**
 * Runs the filters only: every node ends up either kept or excluded with its reason. With an
 * `index`, the per-model head of the pipeline comes from it (the same verdicts, in the same order).
 */
export function filterCandidates(
  req: RouteRequest,
  snapshot: RoutingSnapshot,
  filters: readonly Filter[],
  index?: RouteIndex,
): { readonly kept: readonly NodeView[]; readonly excluded: readonly Exclusion[] } {
  const head = index?.prefix(req, snapshot, filters);
  let kept: readonly NodeView[] = head?.kept ?? snapshot.nodes;
  const excluded: Exclusion[] = head === undefined ? [] : head.excluded.slice();
  for (let i = head?.rest ?? 0; i < filters.length && kept.length > 0; i += 1) {
    const result = (filters[i] as Filter).apply(req, kept, snapshot);
    kept = result.kept;
    for (const e of result.excluded) excluded.push(e);
  }
  return { kept, excluded };
}

export function route(
  req: RouteRequest,
  snapshot: RoutingSnapshot,
  filters: readonly Filter[],
  policy: SelectionPolicy,
  index?: RouteIndex,
): RoutingDecision {
  // The index's plan, when it decides this request; a refusal always takes the whole pipeline.
  const fast = index?.fast(req, snapshot, filters);
  if (fast !== undefined) {
    const picked = policy.choose(req, fast.kept, snapshot);
    if (picked !== undefined)
      return { kind: 'selected', node: picked.node, choice: picked, excluded: fast.excluded, candidates: fast.kept };
  }
  const { kept, excluded } = filterCandidates(req, snapshot, filters, index);
  const choice = policy.choose(req, kept, snapshot);
  return choice === undefined
    ? { kind: 'unroutable', excluded }
    : { kind: 'selected', node: choice.node, choice, excluded, candidates: kept };
}
