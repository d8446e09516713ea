// Why a node was not chosen. A closed set of reasons: the same codes feed 503 bodies, metrics,
// logs and /admin/explain, so names are what operators read.

export type ExclusionCode =
  | 'already_tried'
  | 'group_mismatch'
  | 'dead'
  | 'asleep'
  | 'degraded'
  | 'ejected'
  | 'not_allowed'
  | 'missing'
  | 'empty'
  | 'expired'
  | 'not_loaded'
  | 'too_small'
  /** The prompt may not fit this node's context, and another node is tried first (one that surely fits, or a larger context). */
  | 'may_not_fit'
  | 'no_slot'
  | 'no_budget'
  | 'connections_full'
  /** A router at max_instances with every loaded model busy: waits for one to go idle. */
  | 'models_full'
  /** A switch (or load) on the router is under way: one at a time. */
  | 'switching'
  /** A switch to another model has waited past routing.swap_after: this loaded model's new requests wait behind it. */
  | 'switch_due'
  /** A router at max_instances whose every model it could give up is pinned: a request never switches a pinned model out. */
  | 'pinned'
  /** The model failed to load here recently (routing.load_timeout). */
  | 'load_failed'
  /** The router lists the model's child as failed (it exited non-zero: crashed, killed, or died loading), with its exit code. */
  | 'model_failed'
  /** The router is downloading the model (or has, and not listed it as a model yet): not loadable yet. */
  | 'downloading'
  /** The node does not serve the request's endpoint: its kind's set or `[[nodes]] endpoints` leaves it out, or it answered a route-level 404. */
  | 'endpoint_unsupported';

export interface Exclusion {
  readonly node: string;
  /** Which filter said no. */
  readonly filter: string;
  readonly code: ExclusionCode;
  /** Short human detail, e.g. "last probe: ECONNREFUSED". */
  readonly detail?: string;
}

/** Per-reason counts, e.g. { dead: 2, missing: 1 }, for 503 bodies and metrics. */
export function countByCode(excluded: readonly Exclusion[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const e of excluded) counts[e.code] = (counts[e.code] ?? 0) + 1;
  return counts;
}

/**
 * Per-reason counts for metrics, counted once per exclusion list rather than once per request:
 * the routing index hands out the same frozen list for every first attempt while the fleet is
 * unchanged (1,000 entries when 1,000 nodes do not list the model), so a frozen list's counts are
 * kept (weakly: they go with the list). Lists built per request are counted each time.
 */
export class ExclusionCounter {
  readonly #known = new WeakMap<readonly Exclusion[], readonly (readonly [string, number])[]>();

  of(excluded: readonly Exclusion[]): readonly (readonly [string, number])[] {
    const known = this.#known.get(excluded);
    if (known !== undefined) return known;
    const counted = Object.entries(countByCode(excluded));
    if (Object.isFrozen(excluded)) this.#known.set(excluded, counted);
    return counted;
  }
}

/** Nodes whose fresh model listing could change a "nothing serves this model" answer. */
export function nodesWorthRefreshing(excluded: readonly Exclusion[]): string[] {
  return excluded.filter((e) => e.code === 'missing' || e.code === 'empty' || e.code === 'expired').map((e) => e.node);
}
