// Pure: which asleep nodes could serve a request once awake, judged by what they last said — their
// last known model list and context figures — through the very same filters as live routing.
// A request that no asleep node could serve however it wakes gets its answer now and wakes nothing.

import { isWaking, type NodeView, type RoutingSnapshot } from '#src/nodes/index.ts';
import type { Filter } from './filter.ts';
import { filterCandidates } from './route.ts';
import type { RouteRequest } from './route-request.ts';

/** The node as it would look awake: healthy, its last listing taken as current. */
function asIfAwake(node: NodeView): NodeView {
  const discovery = node.discovery;
  const phase = discovery.models.length > 0 ? 'known' : discovery.lastSuccessAt === undefined ? 'untried' : 'known_empty';
  return {
    ...node,
    health: { ...node.health, status: 'healthy', fails: 0 },
    discovery: { ...discovery, phase, fails: 0 },
    ejectedUntil: undefined,
  };
}

export function wakeCandidates(req: RouteRequest, snapshot: RoutingSnapshot, filters: readonly Filter[]): NodeView[] {
  const asleep = snapshot.nodes.filter((n) => n.health.status === 'asleep');
  if (asleep.length === 0) return [];
  const awakeSnapshot: RoutingSnapshot = { ...snapshot, nodes: asleep.map(asIfAwake) };
  // Capacity is beside the point for a node that is off: it will have every slot free.
  const relevant = filters.filter((f) => f.name !== 'has-capacity');
  const { kept } = filterCandidates(req, awakeSnapshot, relevant);
  const names = new Set(kept.map((n) => n.spec.name));
  return asleep.filter((n) => names.has(n.spec.name));
}

/**
 * The asleep node to wake for a request, or undefined when none could serve it: one already
 * waking (its wake window still open at the snapshot's `now`) is reused rather than waking another.
 */
export function wakeTarget(
  req: RouteRequest,
  snapshot: RoutingSnapshot,
  filters: readonly Filter[],
): { readonly node: NodeView; readonly alreadyWaking: boolean } | undefined {
  const candidates = wakeCandidates(req, snapshot, filters);
  const waking = candidates.find((n) => isWaking(n, snapshot.now));
  if (waking !== undefined) return { node: waking, alreadyWaking: true };
  const first = candidates[0];
  return first === undefined ? undefined : { node: first, alreadyWaking: false };
}
