// One routing decision. Routing is a pure function of (request, snapshot): filters narrow the
// candidates, each drop with a reason, then the policy picks one. It never awaits anything. What the
// decision keeps for the request's record (the dashboard's Requests view, docs/observability.md) is
// its summary (`routeSummary`): the policy, its reason, every candidate's score and every exclusion
// with its reason — plain data, bounded, so it crosses from the scheduler to a worker and into the ring.

import type { NodeView, RoutingSnapshot } from '#src/nodes/index.ts';
import type { Exclusion, ExclusionCode } from './exclusion.ts';
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

// ---- the decision's summary, for the request's record ----

/** Candidates and exclusions kept per decision (a fleet larger than this is summed as `more`). */
export const MAX_SUMMARY_ENTRIES = 16;

export interface CandidateScore {
  readonly node: string;
  /** Lower is better, as the policy scored it (rounded to 4 decimals); null: not a finite number. */
  readonly score: number | null;
}

export interface ExcludedNode {
  readonly node: string;
  readonly code: ExclusionCode;
  readonly detail?: string;
}

export interface RouteSummary {
  /** The selection policy that picked the node, and why (the `x-switchyard-route` header). */
  readonly policy: string;
  readonly reason: string;
  /** Every candidate the policy chose among (at most MAX_SUMMARY_ENTRIES), the chosen one included. */
  readonly scores?: readonly CandidateScore[];
  /** Every node the filters left out, with why (at most MAX_SUMMARY_ENTRIES). */
  readonly excluded?: readonly ExcludedNode[];
  /** Candidates and exclusions beyond the bound. */
  readonly more?: number;
}

const MAX_DETAIL = 160;
/** No exclusion (nearly every decision): one shared empty list. */
const NONE_EXCLUDED: readonly ExcludedNode[] = Object.freeze([]);

export function routeSummary(
  policy: string,
  choice: PolicyChoice,
  candidates: readonly NodeView[],
  excluded: readonly Exclusion[],
): RouteSummary {
  // Sized once: an empty list's first push would reserve seventeen slots for the usual two or three.
  const count = Math.min(candidates.length, MAX_SUMMARY_ENTRIES);
  const scores = new Array<CandidateScore>(count);
  for (let i = 0; i < count; i += 1) {
    const score = choice.scoreAt === undefined ? choice.scores[i] : choice.scoreAt(i);
    scores[i] = {
      node: (candidates[i] as NodeView).spec.name,
      score: score === undefined || !Number.isFinite(score) ? null : Math.round(score * 1e4) / 1e4,
    };
  }
  const out = excluded.length === 0 ? NONE_EXCLUDED : excludedNodes(excluded);
  const more = candidates.length - scores.length + excluded.length - out.length;
  // `more` absent, not undefined, when nothing was left out (no spread: every request builds one).
  const summary: { -readonly [K in keyof RouteSummary]: RouteSummary[K] } = {
    policy,
    reason: choice.reason,
    scores,
    excluded: out,
  };
  if (more > 0) summary.more = more;
  return summary;
}

function excludedNodes(excluded: readonly Exclusion[]): ExcludedNode[] {
  const out: ExcludedNode[] = [];
  for (const e of excluded) {
    if (out.length >= MAX_SUMMARY_ENTRIES) break;
    out.push(
      e.detail === undefined
        ? { node: e.node, code: e.code }
        : { node: e.node, code: e.code, detail: e.detail.slice(0, MAX_DETAIL) },
    );
  }
  return out;
}
