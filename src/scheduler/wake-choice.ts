// Pure: which asleep node to wake for a request nothing awake can serve. A node already waking is
// reused (one wake per wake window serves every request held for it); otherwise the first one
// that could serve the request once awake.

import type { NodeView, RoutingSnapshot } from '#src/nodes/index.ts';
import { wakeCandidates, type Filter, type RouteRequest } from '#src/routing/index.ts';

export interface WakeChoice {
  readonly node: NodeView;
  /** False when a wake is already under way and must not be sent again. */
  readonly send: boolean;
}

export function chooseWake(req: RouteRequest, snapshot: RoutingSnapshot, filters: readonly Filter[]): WakeChoice | undefined {
  const candidates = wakeCandidates(req, snapshot, filters);
  const waking = candidates.find((n) => n.wake.waking);
  if (waking !== undefined) return { node: waking, send: false };
  const first = candidates[0];
  return first === undefined ? undefined : { node: first, send: true };
}
