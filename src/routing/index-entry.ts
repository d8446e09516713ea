// One (model, group) entry of the model → nodes index: each node's verdicts that depend only on its
// view (the pipeline's per-model head, residency and context, health tier, capacity limits), kept
// per fleet position and updated per node when that node's view changes, and the plan derived from
// them: the nodes a first attempt may go to and the exclusions every such decision carries.
//
// The plan holds only while nothing a request brings could change those verdicts. A request whose
// size some node's context refuses, a tier holding a router with max_instances, or a live passive
// ejection is not fast (`fastFor` says so), and routing runs the whole pipeline instead.

import { budgetFor, ctxFor, lastKnownCtx, residencyOf, slotsFor } from '#src/capacity/index.ts';
import type { NodeView, RoutingSnapshot } from '#src/nodes/index.ts';
import type { Exclusion } from './exclusion.ts';
import type { Filter } from './filter.ts';
import { modelLimit } from './filters/router-room.ts';
import type { RouteRequest } from './route-request.ts';
import { tierBounds, type TierBounds } from './tier-room.ts';

/** One node's verdicts for the entry's (model, group), valid while its view is the same object. */
export interface NodeSlot {
  readonly node: NodeView;
  /** Which head filter excluded it (index into the head), -1 when it passed the head. */
  readonly headFilter: number;
  readonly headExclusion: Exclusion | undefined;
  readonly residency: 'loaded' | 'on_demand' | 'absent';
  /** The router's status for an on-demand entry (fits-context's not_loaded detail). */
  readonly status: string;
  /** The context fits-context compares with (loaded: live; on demand: last known); 0 = unknown. */
  readonly fitCtx: number;
  /** The live context the lease's reserved tokens are capped by. */
  readonly leaseCtx: number;
  readonly degraded: boolean;
  readonly ejectedUntil: number | undefined;
  /** A router with max_instances: router-room judges it per request. */
  readonly limited: boolean;
  readonly slots: number | undefined;
  readonly budget: number | undefined;
}

/** What a first attempt without a size problem decides over (derived from the slots). */
export interface EntryPlan {
  /** The head's survivors and exclusions, in pipeline order (for requests that are not fast). */
  readonly headKept: readonly NodeView[];
  readonly headExcluded: readonly Exclusion[];
  /** The nodes left for the capacity check, in fleet order, with their slots. */
  readonly tier: readonly NodeSlot[];
  /** The same nodes' views: a decision where every one has room reuses this array. */
  readonly tierNodes: readonly NodeView[];
  /** The decision when every tier node has room: handed out as is, so such a request copies nothing. */
  readonly verdict: { readonly kept: readonly NodeView[]; readonly excluded: readonly Exclusion[] };
  /** Whether some tier node has slot or budget limits for the model (the lease table is read for it). */
  readonly limits: boolean;
  /** Every exclusion before the capacity check, in pipeline order. */
  readonly excluded: readonly Exclusion[];
  /** The smallest known context among the nodes fits-context judges (Infinity: none known). */
  readonly minCtx: number;
  /** The tier is on-demand nodes only (none has the model loaded): needs routing.load_on_demand. */
  readonly onDemandOnly: boolean;
  /** Latest passive-ejection deadline in the tier: before it, prefer-healthy is judged per request. */
  readonly ejectedUntil: number;
  /** Whether any request can take the plan (no limited router in the tier, a non-empty tier). */
  readonly usable: boolean;
  /** The tier's positions and room bounds (tier-room.ts): room checked from the live counts; undefined without positions. */
  readonly bounds: TierBounds | undefined;
}

export function slotOf(
  node: NodeView,
  model: string,
  req: RouteRequest,
  head: readonly Filter[],
  snapshot: RoutingSnapshot,
): NodeSlot {
  let headFilter = -1;
  let headExclusion: Exclusion | undefined;
  for (let i = 0; i < head.length; i += 1) {
    // Head filters judge each node on its own ('model' filters), so one node at a time gives the same verdict.
    const verdict = (head[i] as Filter).apply(req, [node], snapshot).excluded[0];
    if (verdict !== undefined) {
      headFilter = i;
      headExclusion = verdict;
      break;
    }
  }
  const residency = residencyOf(node, model);
  const leaseCtx = residency.state === 'absent' ? 0 : ctxFor(node, model);
  return {
    node,
    headFilter,
    headExclusion,
    residency: residency.state,
    status: residency.state === 'on_demand' ? residency.status : '',
    fitCtx: residency.state === 'on_demand' ? lastKnownCtx(node, model) : leaseCtx,
    leaseCtx,
    degraded: node.health.status === 'degraded',
    ejectedUntil: node.ejectedUntil,
    limited: modelLimit(node) !== undefined,
    slots: slotsFor(node, model),
    budget: budgetFor(node, model),
  };
}

/**
 * Derives the plan from the slots, in the order the pipeline reports: O(nodes), no lookups. `same`:
 * the plan before, when the slots' verdicts are all unchanged (only views that differ in learned
 * figures are new): the tier's room bounds, which depend only on verdicts and positions, are kept.
 */
export function planOf(slots: readonly NodeSlot[], headLength: number, same?: EntryPlan): EntryPlan {
  const headKept: NodeView[] = [];
  const headExcluded: Exclusion[] = [];
  for (let f = 0; f < headLength; f += 1) {
    for (const s of slots) if (s.headFilter === f && s.headExclusion !== undefined) headExcluded.push(s.headExclusion);
  }
  const loaded: NodeSlot[] = [];
  const onDemand: NodeSlot[] = [];
  const refused: Exclusion[] = [];
  let minCtx = Infinity;
  for (const s of slots) {
    if (s.headFilter >= 0) continue;
    headKept.push(s.node);
    if (s.residency === 'absent') {
      refused.push({ node: s.node.spec.name, filter: 'fits-context', code: 'missing', detail: 'not in the model list' });
      continue;
    }
    if (s.fitCtx > 0 && s.fitCtx < minCtx) minCtx = s.fitCtx;
    (s.residency === 'loaded' ? loaded : onDemand).push(s);
  }
  const onDemandOnly = loaded.length === 0;
  const excluded = [...headExcluded, ...refused];
  if (!onDemandOnly) {
    for (const s of onDemand) {
      excluded.push({
        node: s.node.spec.name,
        filter: 'fits-context',
        code: 'not_loaded',
        detail: `${s.status}; a node has it loaded`,
      });
    }
  }
  const fitting = onDemandOnly ? onDemand : loaded;
  const fine = fitting.filter((s) => !s.degraded);
  let ejectedUntil = -Infinity;
  for (const s of fitting) if (s.ejectedUntil !== undefined && s.ejectedUntil > ejectedUntil) ejectedUntil = s.ejectedUntil;
  const tier = fine.length > 0 ? fine : fitting;
  if (fine.length > 0) {
    for (const s of fitting) {
      if (s.degraded)
        excluded.push({ node: s.node.spec.name, filter: 'prefer-healthy', code: 'degraded', detail: 'a healthy node can serve' });
    }
  }
  const tierNodes = Object.freeze(tier.map((s) => s.node));
  const frozen = Object.freeze(excluded);
  return {
    headKept: Object.freeze(headKept),
    headExcluded: Object.freeze(headExcluded),
    tier: Object.freeze(tier),
    tierNodes,
    verdict: Object.freeze({ kept: tierNodes, excluded: frozen }),
    limits: tier.some((s) => s.slots !== undefined || s.budget !== undefined),
    excluded: frozen,
    minCtx,
    onDemandOnly,
    ejectedUntil,
    usable: tier.length > 0 && !fitting.some((s) => s.limited),
    bounds: same === undefined ? tierBounds(tier) : same.bounds,
  };
}
