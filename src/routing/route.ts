// One routing decision. Routing is a pure function of (request, snapshot): filters narrow the
// candidates, each drop with a reason, then the policy picks one. It never awaits anything. What the
// decision keeps for the request's record (the dashboard's Requests view, docs/observability.md) is
// its summary (`routeSummary`): the policy, its reason, every candidate's score and every exclusion
// with its reason — plain data, bounded, so it crosses from the scheduler to a worker and into the ring.
// The route index (`RouteIndex`, below) is how a decision is taken without running the whole
// pipeline per request: the same verdicts, in the same order, kept between requests.

import { inFlightOf, sameBesidesLearned, type NodeView, type RoutingSnapshot } from '#src/nodes/index.ts';
import { admits } from '#src/capacity/index.ts';
import type { Exclusion, ExclusionCode } from './exclusion.ts';
import type { Filter } from './filter.ts';
import type { PolicyChoice, SelectionPolicy } from './policies/selection-policy.ts';
import { fitsContext } from './filters/fits-context.ts';
import { capacityVerdict, hasCapacity } from './filters/has-capacity.ts';
import { preferHealthy } from './filters/prefer-healthy.ts';
import { NO_TRIED_NODES, neededTokens, reservedTokens, type RouteRequest } from './route-request.ts';
import { planOf, slotOf, type EntryPlan, type NodeSlot } from './index-entry.ts';
import { allSurelyHaveRoom, surelyHasRoom } from './tier-room.ts';

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

// ---- the route index ----
// The model → nodes index routing keeps between requests (the route index). Per (model, group) it holds each node's
// verdicts that depend only on the node's view (index-entry.ts): the pipeline's per-model head
// (same group, not dead, serves the model), residency and context, health tier and capacity
// limits. The registry hands out a new views array when something routing reads changes, and
// reuses the view object of every node that did not change, so an entry is brought up to date per
// changed node (one slot each) instead of being rebuilt over the fleet.
//
// Entries are kept per endpoint too: serves-endpoint is one of the per-model head's filters.
//
// Two ways to use it:
// - `prefix`: the head's verdicts for any pipeline whose leading filters are per-model; the rest of
//   the pipeline then runs per request over the nodes that may serve the model.
// - `fast`: for the default pipeline on a first attempt whose size no node's context refuses, the
//   whole decision up to the capacity check is the entry's plan; per request only the live counts
//   (connections, slots, context budget) of the tier's nodes are read. Anything else (a failover,
//   a prompt some node cannot fit, a limited router, a live ejection, nothing admissible) answers
//   undefined and routing runs the whole pipeline, which also materialises every exclusion.

/** Entries kept at most; past it the least recently built one goes (requests for many models). */
export const ROUTE_INDEX_MAX_ENTRIES = 1024;
/** Node slots kept at most over all entries (about 100 bytes each): bounds memory in large fleets. */
export const ROUTE_INDEX_MAX_SLOTS = 262_144;

/** The cached head of the pipeline for one (model, group), and where the per-request filters start. */
export interface IndexedPrefix {
  readonly kept: readonly NodeView[];
  readonly excluded: readonly Exclusion[];
  /** Index in `filters` of the first filter that was not applied. */
  readonly rest: number;
}

/** A first attempt decided by the plan: the nodes with room now and every exclusion, in pipeline order. */
export interface FastVerdict {
  readonly kept: readonly NodeView[];
  readonly excluded: readonly Exclusion[];
}

/** Where the per-model head lies in a pipeline, and whether its tail is the one `fast` reproduces. */
interface Shape {
  readonly filters: readonly Filter[];
  readonly head: readonly Filter[];
  readonly rest: number;
  readonly fast: boolean;
}

interface Entry {
  nodes: readonly NodeView[];
  slots: NodeSlot[];
  plan: EntryPlan;
  prefix: IndexedPrefix;
}

export class RouteIndex {
  #shape: Shape | undefined;
  /** endpoint ('' = none) → group ('' = none) → model → entry; nested so a lookup builds no key string. */
  #entries = new Map<string, Map<string, Map<string, Entry>>>();
  #order: Entry[] = [];
  #slotCount = 0;

  /**
   * The pipeline's head for `req`, or undefined when the index cannot answer for it: a failover
   * (tried nodes are excluded first, before any per-model filter) or a pipeline with nothing to reuse.
   */
  prefix(req: RouteRequest, snapshot: RoutingSnapshot, filters: readonly Filter[]): IndexedPrefix | undefined {
    if (req.triedNodes.size > 0) return undefined;
    return this.#entry(req, snapshot, filters)?.prefix;
  }

  /**
   * The default pipeline's verdict for a first attempt, when the entry's plan decides it.
   * Undefined: run the whole pipeline (which also names every exclusion of a refusal).
   */
  fast(req: RouteRequest, snapshot: RoutingSnapshot, filters: readonly Filter[]): FastVerdict | undefined {
    if (req.triedNodes.size > 0) return undefined;
    const entry = this.#entry(req, snapshot, filters);
    if (entry === undefined || this.#shape?.fast !== true) return undefined;
    const plan = entry.plan;
    if (!plan.usable || neededTokens(req) > plan.minCtx || snapshot.now < plan.ejectedUntil) return undefined;
    if (plan.onDemandOnly && !req.loadOnDemand) return undefined;
    // No node at its connection limit: no count needs reading for it.
    const limit = snapshot.nodesAtConnectionLimit === 0 ? undefined : snapshot.connectionLimit;
    // Nothing per request to check: every tier node may take it, and the plan's array is the answer.
    if (limit === undefined && !plan.limits) return plan.verdict;
    // The registry's own counts (journalled: not a mirror's) clear most nodes without the lease table.
    const counts = snapshot.inFlightChanges === undefined ? undefined : snapshot.inFlightByPosition;
    const bounds = counts === undefined ? undefined : plan.bounds;
    if (bounds !== undefined && counts !== undefined && allSurelyHaveRoom(bounds, counts, limit)) return plan.verdict;
    // The tier is copied only from the first node without room on.
    let kept: NodeView[] | undefined;
    let refused: Exclusion[] | undefined;
    const tier = plan.tier;
    for (let i = 0; i < tier.length; i += 1) {
      const slot = tier[i] as NodeSlot;
      const node = slot.node;
      if (bounds !== undefined && counts !== undefined && surelyHasRoom(bounds, i, counts, limit)) {
        kept?.push(node);
        continue;
      }
      let full = limit !== undefined && inFlightOf(snapshot, node) >= limit;
      if (!full && (slot.slots !== undefined || slot.budget !== undefined)) {
        full = admits(snapshot.usage(node.spec.name, req.model), slot, reservedTokens(req, slot.leaseCtx)) !== undefined;
      }
      if (full) {
        kept ??= plan.tierNodes.slice(0, i);
        (refused ??= []).push(capacityVerdict(req, node, snapshot) as Exclusion);
      } else if (kept !== undefined) {
        kept.push(node);
      }
    }
    if (kept === undefined) return plan.verdict;
    if (kept.length === 0) return undefined;
    return { kept, excluded: [...plan.excluded, ...(refused ?? [])] };
  }

  #entry(req: RouteRequest, snapshot: RoutingSnapshot, filters: readonly Filter[]): Entry | undefined {
    const shape = this.#shapeOf(filters);
    if (shape === undefined) return undefined;
    const endpoint = req.endpoint ?? '';
    const group = req.group ?? '';
    let byGroup = this.#entries.get(endpoint);
    let byModel = byGroup?.get(group);
    let entry = byModel?.get(req.model);
    if (entry !== undefined) {
      if (entry.nodes !== snapshot.nodes) this.#sync(entry, req, snapshot, shape);
      return entry;
    }
    const head = headRequest(req);
    const slots = snapshot.nodes.map((n) => slotOf(n, req.model, head, shape.head, snapshot));
    entry = { nodes: snapshot.nodes, slots, ...derived(slots, shape) };
    this.#makeRoom(slots.length);
    if (byGroup === undefined) this.#entries.set(endpoint, (byGroup = new Map()));
    if (byModel === undefined) byGroup.set(group, (byModel = new Map()));
    byModel.set(req.model, entry);
    this.#order.push(entry);
    this.#slotCount += slots.length;
    return entry;
  }

  /** Brings an entry up to the snapshot's views: one new slot per node whose view changed. */
  #sync(entry: Entry, req: RouteRequest, snapshot: RoutingSnapshot, shape: Shape): void {
    const nodes = snapshot.nodes;
    const same = nodes.length === entry.slots.length;
    const slots = same ? entry.slots : [];
    const head = headRequest(req);
    // Only learned figures moved (each answer may move them): the verdicts hold, the slots point at the new views.
    let verdictsHold = same;
    for (let i = 0; i < nodes.length; i += 1) {
      const view = nodes[i] as NodeView;
      const old = slots[i];
      if (same && old !== undefined) {
        if (old.node === view) continue;
        if (sameBesidesLearned(old.node, view)) {
          slots[i] = { ...old, node: view };
          continue;
        }
      }
      verdictsHold = false;
      slots[i] = slotOf(view, req.model, head, shape.head, snapshot);
    }
    this.#slotCount += slots.length - entry.slots.length;
    entry.nodes = nodes;
    entry.slots = slots;
    Object.assign(entry, derived(slots, shape, verdictsHold ? entry.plan : undefined));
  }

  #shapeOf(filters: readonly Filter[]): Shape | undefined {
    if (this.#shape?.filters === filters) return this.#shape;
    // Filters that only look at tried nodes exclude nothing on a first attempt.
    let start = 0;
    while (start < filters.length && filters[start]?.reads === 'tried') start += 1;
    let end = start;
    while (end < filters.length && filters[end]?.reads === 'model') end += 1;
    this.#clear();
    if (end === start) {
      this.#shape = undefined;
      return undefined;
    }
    this.#shape = { filters, head: filters.slice(start, end), rest: end, fast: isDefaultTail(filters.slice(end)) };
    return this.#shape;
  }

  #makeRoom(adding: number): void {
    while (
      this.#order.length > 0 &&
      (this.#order.length >= ROUTE_INDEX_MAX_ENTRIES || this.#slotCount + adding > ROUTE_INDEX_MAX_SLOTS)
    ) {
      const oldest = this.#order.shift() as Entry;
      this.#slotCount -= oldest.slots.length;
      for (const [endpoint, byGroup] of this.#entries) {
        for (const [group, byModel] of byGroup) {
          for (const [model, entry] of byModel) if (entry === oldest) byModel.delete(model);
          if (byModel.size === 0) byGroup.delete(group);
        }
        if (byGroup.size === 0) this.#entries.delete(endpoint);
      }
    }
  }

  #clear(): void {
    this.#entries = new Map();
    this.#order = [];
    this.#slotCount = 0;
  }
}

/** What the head filters read of a request (model and group): a small copy, not the prompt. */
function headRequest(req: RouteRequest): RouteRequest {
  return {
    ...req,
    triedNodes: NO_TRIED_NODES,
    promptPrefix: undefined,
    affinityKey: undefined,
    sessionKey: undefined,
    previousResponseId: undefined,
  };
}

/** The entry's plan over `slots`; `same`: the plan before, when every slot's verdicts are unchanged (only its view is new). */
function derived(slots: readonly NodeSlot[], shape: Shape, same?: EntryPlan): { plan: EntryPlan; prefix: IndexedPrefix } {
  const plan = planOf(slots, shape.head.length, same);
  return { plan, prefix: { kept: plan.headKept, excluded: plan.headExcluded, rest: shape.rest } };
}

/** The tail `fast` reproduces: fits-context, the scheduler's router-room, prefer-healthy, has-capacity. */
function isDefaultTail(tail: readonly Filter[]): boolean {
  const names = tail.map((f) => f.name).join(',');
  const last = tail.at(-1);
  const known =
    tail[0] === fitsContext && tail.at(-2) === preferHealthy && (last === hasCapacity || last?.refines === hasCapacity);
  return (
    known &&
    (names === 'fits-context,prefer-healthy,has-capacity' || names === 'fits-context,router-room,prefer-healthy,has-capacity')
  );
}
