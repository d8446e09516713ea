// A filter takes the whole candidate list, so set-level rules ("degraded only when no healthy node
// serves") fit too. It never drops a node silently: every drop is an Exclusion.

import type { NodeView, RoutingSnapshot } from '#src/nodes/index.ts';
import type { Exclusion, ExclusionCode } from './exclusion.ts';
import type { RouteRequest } from './route-request.ts';

export interface FilterResult {
  readonly kept: readonly NodeView[];
  readonly excluded: readonly Exclusion[];
}

export interface Filter {
  readonly name: string;
  /**
   * What its verdicts depend on besides the node's view, so routing may reuse them (route.ts, RouteIndex):
   * 'model' = only the request's model, group and endpoint; 'tried' = only the request's tried nodes (nothing
   * is excluded on a first attempt). Absent = anything (the snapshot's time, usage, the request's size).
   */
  readonly reads?: 'model' | 'tried';
  /**
   * The filter this one judges like for every node the route index plans: it differs only on limited
   * routers (routing/pipeline.ts), which make an index plan unusable, so the index may still answer.
   */
  readonly refines?: Filter;
  apply(req: RouteRequest, candidates: readonly NodeView[], snapshot: RoutingSnapshot): FilterResult;
}

export type Verdict = { readonly code: ExclusionCode; readonly detail?: string } | undefined;

/** The common case: one predicate per candidate; `undefined` keeps it. */
export function predicateFilter(
  name: string,
  check: (req: RouteRequest, node: NodeView) => Verdict,
  reads?: Filter['reads'],
): Filter {
  return {
    name,
    ...(reads === undefined ? {} : { reads }),
    apply(req, candidates) {
      const kept: NodeView[] = [];
      const excluded: Exclusion[] = [];
      for (const node of candidates) {
        const verdict = check(req, node);
        if (verdict === undefined) kept.push(node);
        else excluded.push({ node: node.spec.name, filter: name, ...verdict });
      }
      return { kept, excluded };
    },
  };
}
