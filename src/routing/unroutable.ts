// Pure: what an unroutable decision means for the client. Capacity exclusions mean "wait in the
// queue"; a prompt that no node serving the model could ever fit means 400; anything else is 503.

import { lastKnownCtx, residencyOf } from '#src/capacity/index.ts';
import type { RoutingSnapshot } from '#src/nodes/index.ts';
import type { Exclusion } from './exclusion.ts';

export type UnroutableKind = 'busy' | 'too_large' | 'unavailable';

/** Reasons that may clear by themselves soon, so a too-small verdict elsewhere is not final. */
const TRANSIENT = new Set(['dead', 'asleep', 'degraded', 'ejected', 'expired', 'already_tried', 'not_loaded']);

export function classifyUnroutable(excluded: readonly Exclusion[]): UnroutableKind {
  if (excluded.some((e) => e.code === 'no_slot' || e.code === 'no_budget')) return 'busy';
  const tooSmall = excluded.some((e) => e.code === 'too_small');
  if (tooSmall && !excluded.some((e) => TRANSIENT.has(e.code))) return 'too_large';
  return 'unavailable';
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
