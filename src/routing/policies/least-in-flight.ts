// Least in-flight requests wins; ties are broken round-robin so equal nodes share the load.
// Every candidate's live count is read per decision (a plain scan: the registry's views carry
// positions into one live array). Issue 39 measured it against keeping each candidates array
// ordered by load from a journal of count changes: the same time up to a few hundred nodes, and
// ~10 µs against 0.3 at 1,000 (docs/design.md, "Three product questions"). The rotation cursor is
// the policy instance's own state (one instance per gateway).

import { inFlightOf, type NodeView, type RoutingSnapshot } from '#src/nodes/index.ts';
import type { PolicyChoice, SelectionPolicy } from './selection-policy.ts';
import type { RequestFeature } from './selection-policy.ts';

/** It reads no request feature: the candidates and the snapshot decide. */
export const LEAST_IN_FLIGHT_READS: readonly RequestFeature[] = Object.freeze([]);

/**
 * Pure: the candidate with the lowest score (`least`), ties taken in turn (`turn` modulo the tie count).
 * Plain index loops over the number array (no iterator, no candidate read until the pick): this
 * runs over every candidate of every request.
 */
export function pickLowest(
  candidates: readonly NodeView[],
  scores: readonly number[],
  turn: number,
): { node: NodeView; ties: number; least: number } | undefined {
  let least = Infinity;
  let ties = 0;
  const count = scores.length;
  for (let i = 0; i < count; i += 1) {
    const score = scores[i] as number;
    if (score < least) {
      least = score;
      ties = 1;
    } else if (score === least) {
      ties += 1;
    }
  }
  if (ties === 0) return undefined;
  let wanted = turn % ties;
  for (let i = 0; i < count; i += 1) {
    if (scores[i] !== least) continue;
    if (wanted === 0) {
      const node = candidates[i];
      return node === undefined ? undefined : { node, ties, least };
    }
    wanted -= 1;
  }
  return undefined;
}

/** Pure: among the candidates with the fewest in-flight requests, the one at `turn` modulo their count. */
export function pickLeastInFlight(
  candidates: readonly NodeView[],
  inFlight: (nodeName: string) => number,
  turn: number,
): NodeView | undefined {
  return pickLowest(
    candidates,
    candidates.map((n) => inFlight(n.spec.name)),
    turn,
  )?.node;
}

/** Each candidate's live in-flight count, aligned (a plain loop: this runs over the whole fleet). */
export function inFlights(candidates: readonly NodeView[], snapshot: RoutingSnapshot): number[] {
  const count = candidates.length;
  // Sized once: an empty list's first push reserves seventeen slots.
  const out = new Array<number>(count);
  // The registry's views carry positions into one live array: read it once, not per candidate.
  const byPosition = snapshot.inFlightByPosition;
  for (let i = 0; i < count; i += 1) {
    const node = candidates[i] as NodeView;
    const position = node.position;
    out[i] = byPosition !== undefined && position !== undefined ? (byPosition[position] ?? 0) : inFlightOf(snapshot, node);
  }
  return out;
}

export function leastInFlight(): SelectionPolicy {
  let turn = 0;
  return {
    name: 'least-in-flight',
    reads: LEAST_IN_FLIGHT_READS,
    choose(_req, candidates, snapshot): PolicyChoice | undefined {
      const scores = inFlights(candidates, snapshot);
      const picked = pickLowest(candidates, scores, turn);
      if (picked === undefined) return undefined;
      turn = (turn + 1) % Number.MAX_SAFE_INTEGER;
      // Its score is its in-flight count, read a moment ago from the same snapshot.
      return { node: picked.node, reason: `fewest in flight (${picked.least}, ${picked.ties} tied)`, scores };
    },
  };
}
