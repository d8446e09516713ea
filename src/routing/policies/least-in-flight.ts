// Least in-flight requests wins; ties are broken round-robin so equal nodes share the load.
// The rotation cursor is the policy instance's own state (one instance per gateway).

import type { NodeView, RoutingSnapshot } from '#src/nodes/index.ts';
import type { RouteRequest } from '../route-request.ts';

export interface SelectionPolicy {
  readonly name: string;
  /** Receives only admissible candidates; never does I/O; never mutates its input. */
  select(req: RouteRequest, candidates: readonly NodeView[], snapshot: RoutingSnapshot): NodeView | undefined;
}

/** Pure: among the candidates with the fewest in-flight requests, the one at `turn` modulo their count. */
export function pickLeastInFlight(
  candidates: readonly NodeView[],
  inFlight: (nodeName: string) => number,
  turn: number,
): NodeView | undefined {
  let least = Infinity;
  const tied: NodeView[] = [];
  for (const node of candidates) {
    const load = inFlight(node.spec.name);
    if (load < least) {
      least = load;
      tied.length = 0;
      tied.push(node);
    } else if (load === least) {
      tied.push(node);
    }
  }
  if (tied.length === 0) return undefined;
  return tied[turn % tied.length];
}

export function leastInFlight(): SelectionPolicy {
  let turn = 0;
  return {
    name: 'least-in-flight',
    select(_req, candidates, snapshot) {
      const picked = pickLeastInFlight(candidates, (name) => snapshot.inFlight(name), turn);
      if (picked !== undefined) turn = (turn + 1) % Number.MAX_SAFE_INTEGER;
      return picked;
    },
  };
}
