// Least in-flight requests wins; ties are broken round-robin so equal nodes share the load.
// The rotation cursor is the policy instance's own state (one instance per gateway).

import { inFlightOf, type NodeView, type RoutingSnapshot } from '#src/nodes/index.ts';
import type { PolicyChoice, SelectionPolicy } from './selection-policy.ts';
import type { RequestFeature } from './request-features.ts';

/** It reads no request feature: the candidates and the snapshot decide. */
export const LEAST_IN_FLIGHT_READS: readonly RequestFeature[] = Object.freeze([]);

/** Pure: the candidate with the lowest score, ties taken in turn (`turn` modulo the tie count). */
export function pickLowest(candidates: readonly NodeView[], scores: readonly number[], turn: number): { node: NodeView; ties: number } | undefined {
  let least = Infinity;
  let ties = 0;
  for (const score of scores) {
    if (score < least) {
      least = score;
      ties = 1;
    } else if (score === least) {
      ties += 1;
    }
  }
  if (ties === 0) return undefined;
  let wanted = turn % ties;
  for (let i = 0; i < candidates.length; i += 1) {
    if (scores[i] !== least) continue;
    const node = candidates[i];
    if (wanted === 0 && node !== undefined) return { node, ties };
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
  const out = new Array<number>(candidates.length);
  for (let i = 0; i < candidates.length; i += 1) out[i] = inFlightOf(snapshot, candidates[i] as NodeView);
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
      const load = inFlightOf(snapshot, picked.node);
      return { node: picked.node, reason: `fewest in flight (${load}, ${picked.ties} tied)`, scores };
    },
  };
}
