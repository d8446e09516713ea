// Least in-flight requests wins; ties are broken round-robin so equal nodes share the load.
// With the registry's journal of count changes (a gateway's snapshots), each candidates array is
// kept ordered by load (load-order.ts) and a decision reads only the counts that changed since the
// last one; without it (a test's snapshot, a worker's mirror) every candidate is scored.
// The rotation cursor and the orders are the policy instance's own state (one instance per gateway).

import { inFlightOf, type NodeView, type RoutingSnapshot } from '#src/nodes/index.ts';
import type { PolicyChoice, SelectionPolicy } from './selection-policy.ts';
import type { RequestFeature } from './request-features.ts';
import { CandidatePositions } from './candidate-positions.ts';
import { LoadOrder } from './load-order.ts';

/** It reads no request feature: the candidates and the snapshot decide. */
export const LEAST_IN_FLIGHT_READS: readonly RequestFeature[] = Object.freeze([]);

/**
 * Pure: the candidate with the lowest score, ties taken in turn (`turn` modulo the tie count).
 * Plain index loops over the number array (no iterator, no candidate read until the pick): this
 * runs over every candidate of every request, 10,000 of them in a large fleet.
 */
export function pickLowest(
  candidates: readonly NodeView[],
  scores: readonly number[],
  turn: number,
): { node: NodeView; ties: number } | undefined {
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
      return node === undefined ? undefined : { node, ties };
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
  const out: number[] = [];
  // The registry's views carry positions into one live array: read it once, not per candidate.
  const byPosition = snapshot.inFlightByPosition;
  for (let i = 0; i < count; i += 1) {
    const node = candidates[i] as NodeView;
    const position = node.position;
    out.push(byPosition !== undefined && position !== undefined ? (byPosition[position] ?? 0) : inFlightOf(snapshot, node));
  }
  return out;
}

export function leastInFlight(): SelectionPolicy {
  let turn = 0;
  const positions = new CandidatePositions();
  const orders = new WeakMap<readonly NodeView[], LoadOrder>();
  // An order is built for an array seen a second time: one built per request (the whole
  // pipeline's, a failover's) would cost more than scoring it.
  const seen = new WeakSet<readonly NodeView[]>();
  /** The candidates kept ordered by load, up to date; undefined when the snapshot has no journal or a view no position. */
  const orderFor = (candidates: readonly NodeView[], snapshot: RoutingSnapshot): LoadOrder | undefined => {
    const source = snapshot.inFlightByPosition;
    const journal = snapshot.inFlightChanges;
    if (source === undefined || journal === undefined) return undefined;
    let order = orders.get(candidates);
    if (order !== undefined && order.source === source && order.journal === journal && order.sync()) return order;
    if (order === undefined && !seen.has(candidates)) {
      seen.add(candidates);
      return undefined;
    }
    const at = positions.of(candidates);
    if (at === undefined) return undefined;
    order = new LoadOrder(at, source, journal);
    orders.set(candidates, order);
    return order;
  };
  return {
    name: 'least-in-flight',
    reads: LEAST_IN_FLIGHT_READS,
    choose(_req, candidates, snapshot): PolicyChoice | undefined {
      const order = orderFor(candidates, snapshot);
      if (order !== undefined) {
        const index = order.least();
        const node = index < 0 ? undefined : candidates[index];
        if (node === undefined) return undefined;
        const choice = new OrderedChoice(node, order.countOf(index), order.tiesOf(index), order, candidates, snapshot);
        order.rotate(index);
        return choice;
      }
      const scores = positions.inFlights(candidates, snapshot);
      const picked = pickLowest(candidates, scores, turn);
      if (picked === undefined) return undefined;
      turn = (turn + 1) % Number.MAX_SAFE_INTEGER;
      const load = inFlightOf(snapshot, picked.node);
      return { node: picked.node, reason: `fewest in flight (${load}, ${picked.ties} tied)`, scores };
    },
  };
}

/**
 * A pick from the ordered candidates. Its scores (each candidate's count) are read only when asked
 * for (explain, the route summary's first few): from the order while no later decision has synced
 * it, else live. A class, so a decision allocates one small object with no closures.
 */
class OrderedChoice implements PolicyChoice {
  readonly node: NodeView;
  readonly reason: string;
  readonly #order: LoadOrder;
  readonly #version: number;
  readonly #candidates: readonly NodeView[];
  readonly #snapshot: RoutingSnapshot;
  #scores: number[] | undefined;

  constructor(
    node: NodeView,
    load: number,
    ties: number,
    order: LoadOrder,
    candidates: readonly NodeView[],
    snapshot: RoutingSnapshot,
  ) {
    this.node = node;
    this.reason = `fewest in flight (${load}, ${ties} tied)`;
    this.#order = order;
    this.#version = order.version;
    this.#candidates = candidates;
    this.#snapshot = snapshot;
  }

  get scores(): readonly number[] {
    this.#scores ??= Array.from({ length: this.#candidates.length }, (_, i) => this.scoreAt(i) ?? 0);
    return this.#scores;
  }

  readonly scoreAt = (i: number): number | undefined => {
    if (i < 0 || i >= this.#candidates.length) return undefined;
    return this.#order.version === this.#version
      ? this.#order.countOf(i)
      : inFlightOf(this.#snapshot, this.#candidates[i] as NodeView);
  };
}
