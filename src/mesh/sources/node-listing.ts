// The `node-listing` source: the models this site's own nodes list, as discovery and capacity
// polling keep them. Pure over node views.
//
// - A node counts while its listing is `known` or `degraded` (a failed fetch keeps the last-known-
//   good listing, as the discovery state machine does). An `expired` listing counts no more: routing
//   admits nothing there, so publishing it would draw forwarded requests this site must refuse.
// - Dead nodes count for nothing. Asleep nodes (they have a wake) offer their models on demand,
//   unless a wake was sent and its window passed with the node still asleep ("past its wake").
// - Loaded on any counted node = not on demand. A llama-server router's unloaded models, and every
//   model of an asleep node, are on demand.
// - ctx = the largest context any counted node offers the model (the last known figure for models
//   not loaded now), omitted when no node reported one.

import { lastKnownCtx, residencyOf } from '#src/capacity/index.ts';
import { isWaking, type NodeView } from '#src/nodes/index.ts';
import type { SiteRecordModel } from '../site-record.ts';

export type NodeListing = { kind: 'list'; models: SiteRecordModel[] } | { kind: 'unknown'; reason: string };

/** Why a node adds nothing to the site's set now; undefined = it counts. */
export function nodeLeftOut(view: NodeView, now: number): string | undefined {
  if (view.health.status === 'dead') return 'dead';
  if (view.health.status === 'asleep' && view.wake.wakingUntil !== undefined && !isWaking(view, now))
    return 'asleep past its wake';
  if (view.discovery.phase !== 'known' && view.discovery.phase !== 'degraded') return `listing ${view.discovery.phase}`;
  return undefined;
}

export function nodeListingModels(views: readonly NodeView[], now: number): NodeListing {
  // Before any node has answered a listing, the set is unknown, not empty: nothing is published
  // as "this site serves nothing" while the first round is still under way.
  if (views.length > 0 && views.every((v) => v.discovery.phase === 'untried'))
    return { kind: 'unknown', reason: 'no listing yet' };
  const found = new Map<string, { ctx: number; onDemand: boolean }>();
  for (const view of views) {
    if (nodeLeftOut(view, now) !== undefined) continue;
    const asleep = view.health.status === 'asleep';
    for (const id of view.modelsById.keys()) {
      const residency = residencyOf(view, id);
      if (residency.state === 'absent') continue;
      const onDemand = asleep || residency.state === 'on_demand';
      const prior = found.get(id);
      const ctx = Math.max(prior?.ctx ?? 0, lastKnownCtx(view, id));
      found.set(id, { ctx, onDemand: (prior?.onDemand ?? true) && onDemand });
    }
  }
  const models = [...found].map(([id, { ctx, onDemand }]) => ({
    id,
    ...(ctx > 0 ? { ctx } : {}),
    ...(onDemand ? { on_demand: true } : {}),
  }));
  return { kind: 'list', models };
}
