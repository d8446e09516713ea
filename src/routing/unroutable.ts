// Pure: what an unroutable decision means for the client. Capacity exclusions (slots, context
// budget, connections) mean "wait in the queue"; a prompt that no node serving the model could
// ever fit means 400; a model whose every router is full of pinned models, with no other node that
// could take it once something clears, is blocked until the config changes (503 that invites no
// retry); anything else is 503.

import { lastKnownCtx, residencyOf } from '#src/capacity/index.ts';
import type { RoutingSnapshot } from '#src/nodes/index.ts';
import type { Exclusion } from './exclusion.ts';
import { minNeededTokens, type RouteRequest } from './route-request.ts';

export type UnroutableKind = 'busy' | 'too_large' | 'blocked' | 'unavailable';

/** Reasons that clear when a request in flight finishes: the request waits in its model's queue. */
const BUSY: ReadonlySet<string> = new Set(['no_slot', 'no_budget', 'connections_full', 'models_full', 'switching', 'switch_due']);

/** Reasons that may clear by themselves soon, so a too-small verdict elsewhere is not final. */
const TRANSIENT: ReadonlySet<string> = new Set([
  'dead',
  'asleep',
  'degraded',
  'ejected',
  'expired',
  'already_tried',
  'not_loaded',
]);

/**
 * Reasons no wait clears: the node does not serve the model or endpoint (by config or its listing),
 * its context is too small, or its every slot is pinned. A node excluded for any other reason may
 * take the request once that reason clears (dead, asleep, a load that failed, …).
 */
const LASTING: ReadonlySet<string> = new Set([
  'group_mismatch',
  'not_allowed',
  'missing',
  'empty',
  'endpoint_unsupported',
  'too_small',
  'pinned',
]);

/**
 * `mightFitLater(node)` says whether a node excluded for a transient reason could take the request
 * once that reason clears; only such nodes keep a too-small verdict open (a dead node that never
 * listed the model, or whose context is too small anyway, must not turn a 400 into a 503). A
 * router excluded `pinned` that could take the request keeps it from being too large: it is
 * `blocked` (by the pins) when nothing else could take it once its reason clears.
 */
export function classifyUnroutable(
  excluded: readonly Exclusion[],
  mightFitLater: (node: string) => boolean = () => true,
): UnroutableKind {
  if (excluded.some((e) => BUSY.has(e.code))) return 'busy';
  const pinned = excluded.some((e) => e.code === 'pinned' && mightFitLater(e.node));
  const tooSmall = excluded.some((e) => e.code === 'too_small');
  if (tooSmall && !pinned && !excluded.some((e) => TRANSIENT.has(e.code) && mightFitLater(e.node))) return 'too_large';
  if (pinned && !excluded.some((e) => !LASTING.has(e.code) && mightFitLater(e.node))) return 'blocked';
  return 'unavailable';
}

/** Pure: whether a node may serve `req.model` (by its last listing) with a context that is unknown or not proven too small. */
export function mightFitLater(snapshot: RoutingSnapshot, req: RouteRequest): (node: string) => boolean {
  const need = minNeededTokens(req);
  return (name) => {
    const view = snapshot.nodes.find((n) => n.spec.name === name);
    if (view === undefined || residencyOf(view, req.model).state === 'absent') return false;
    const ctx = lastKnownCtx(view, req.model);
    return ctx === 0 || ctx >= need;
  };
}

/** The largest context any node offers the model: loaded ones now, others by their last known figure. */
export function largestContext(snapshot: RoutingSnapshot, model: string): number {
  let largest = 0;
  for (const node of snapshot.nodes) {
    if (residencyOf(node, model).state === 'absent') continue;
    largest = Math.max(largest, lastKnownCtx(node, model));
  }
  return largest;
}
