// The model → nodes index routing reuses between requests. The leading filters whose verdicts depend
// only on the request's model and group and on each node's view (same group, not dead, serves the
// model) give the same answer for every first attempt until the fleet changes, so their result —
// the nodes that may serve the model, and every other node with its reason, in pipeline order — is
// kept per (model, group). The registry hands out a new views array whenever something routing
// reads changes (discovery, health, capacity), which is what invalidates the index; only the
// per-request filters (context, router room, health preference, capacity) then run per request,
// over the nodes that list the model instead of the whole fleet.

import type { NodeView, RoutingSnapshot } from '#src/nodes/index.ts';
import type { Exclusion } from './exclusion.ts';
import type { Filter } from './filter.ts';
import type { RouteRequest } from './route-request.ts';

/** Entries kept per fleet generation; past it the index starts over (requests for many models). */
export const ROUTE_INDEX_MAX_ENTRIES = 1024;

/** The cached head of the pipeline for one (model, group), and where the per-request filters start. */
export interface IndexedPrefix {
  readonly kept: readonly NodeView[];
  readonly excluded: readonly Exclusion[];
  /** Index in `filters` of the first filter that was not applied. */
  readonly rest: number;
}

/** A filter whose verdicts the index may reuse across requests of one (model, group). */
function perModel(filter: Filter): boolean {
  return filter.reads === 'model';
}

export class RouteIndex {
  #nodes: readonly NodeView[] | undefined;
  #filters: readonly Filter[] | undefined;
  #entries = new Map<string, IndexedPrefix>();

  /**
   * The pipeline's head for `req`, or undefined when the index cannot answer for it: a failover
   * (tried nodes are excluded first, before any per-model filter) or a pipeline with nothing to reuse.
   */
  prefix(req: RouteRequest, snapshot: RoutingSnapshot, filters: readonly Filter[]): IndexedPrefix | undefined {
    if (req.triedNodes.size > 0) return undefined;
    // Filters that only look at tried nodes exclude nothing on a first attempt.
    let start = 0;
    while (start < filters.length && filters[start]?.reads === 'tried') start += 1;
    let end = start;
    while (end < filters.length && perModel(filters[end] as Filter)) end += 1;
    if (end === start) return undefined;
    if (snapshot.nodes !== this.#nodes || filters !== this.#filters) {
      this.#nodes = snapshot.nodes;
      this.#filters = filters;
      this.#entries = new Map();
    }
    const key = `${req.group ?? ''}\u0000${req.model}`;
    let entry = this.#entries.get(key);
    if (entry === undefined) {
      if (this.#entries.size >= ROUTE_INDEX_MAX_ENTRIES) this.#entries = new Map();
      entry = applyRange(req, snapshot, filters, start, end);
      this.#entries.set(key, entry);
    }
    return entry;
  }
}

function applyRange(req: RouteRequest, snapshot: RoutingSnapshot, filters: readonly Filter[], start: number, end: number): IndexedPrefix {
  let kept: readonly NodeView[] = snapshot.nodes;
  const excluded: Exclusion[] = [];
  for (let i = start; i < end && kept.length > 0; i += 1) {
    const result = (filters[i] as Filter).apply(req, kept, snapshot);
    kept = result.kept;
    for (const e of result.excluded) excluded.push(e);
  }
  return { kept: Object.freeze(kept), excluded: Object.freeze(excluded), rest: end };
}
