// Affinity: requests with the same key (a session header, the `user` field, or the prompt's first
// characters) go to the same node, by consistent hashing with bounded loads. The hashing is
// rendezvous (highest random weight): each candidate's weight is a hash of (key, node), and the key
// goes to the highest-weight candidate whose in-flight count is under the bound
// ceil((1 + epsilon) x average in-flight, this request included). Adding or removing a node moves
// only the keys that node wins (about 1/N), and no key, however hot, pushes a node past the bound.
// O(candidates) per decision; node-name hashes are cached per (frozen) spec.

import type { NodeSpec } from '#src/config/index.ts';
import type { NodeView } from '#src/nodes/index.ts';
import { fnv1a32, mix32 } from './hash.ts';
import { inFlights, pickLowest } from './least-in-flight.ts';
import type { PolicyContext, SelectionPolicy } from './selection-policy.ts';
import type { RequestFeature } from './selection-policy.ts';

/** The request features it reads: the key it hashes. */
export const AFFINITY_READS: readonly RequestFeature[] = Object.freeze(['affinityKey']);

/** The most in-flight requests a node may hold for keyed traffic, this request included in the average. */
export function loadBound(totalInFlight: number, candidates: number, epsilon: number): number {
  return Math.ceil(((1 + epsilon) * (totalInFlight + 1)) / Math.max(1, candidates));
}

/** Each node name's hash, cached per (frozen) spec. */
export function specHasher(): (spec: NodeSpec) => number {
  const nameHashes = new WeakMap<NodeSpec, number>();
  return (spec) => {
    let hash = nameHashes.get(spec);
    if (hash === undefined) {
      hash = fnv1a32(spec.name);
      nameHashes.set(spec, hash);
    }
    return hash;
  };
}

/** Pure: a key's rendezvous pick among the candidates under `bound`; its home is the highest weight whatever the load. */
export interface RendezvousPick {
  /** The highest-weight candidate under the bound (-1: none). */
  readonly best: number;
  /** The highest-weight candidate. */
  readonly home: number;
  /** Lower is better: a node under the bound scores minus its weight (0..1), a full one 1 + its load share. */
  readonly scores: number[];
}

export function rendezvous(
  keyHash: number,
  candidates: readonly NodeView[],
  loads: readonly number[],
  bound: number,
  nameHash: (spec: NodeSpec) => number,
): RendezvousPick {
  let best = -1;
  let home = -1;
  let bestWeight = -1;
  let homeWeight = -1;
  const scores = candidates.map((node, i) => {
    const weight = mix32(keyHash, nameHash(node.spec));
    const load = loads[i] ?? 0;
    if (weight > homeWeight) {
      homeWeight = weight;
      home = i;
    }
    if (load < bound && weight > bestWeight) {
      bestWeight = weight;
      best = i;
    }
    return load < bound ? -weight / 4_294_967_296 : 1 + load / bound;
  });
  return { best, home, scores };
}

export function affinity(context: PolicyContext): SelectionPolicy {
  const nameHash = specHasher();
  let turn = 0;
  return {
    name: 'affinity',
    reads: AFFINITY_READS,
    choose(req, candidates, snapshot) {
      if (candidates.length === 0) return undefined;
      const loads = inFlights(candidates, snapshot);
      const key = req.affinityKey;
      if (key === undefined) {
        const picked = pickLowest(candidates, loads, turn);
        turn = (turn + 1) % Number.MAX_SAFE_INTEGER;
        return picked === undefined
          ? undefined
          : { node: picked.node, reason: 'no affinity key, fewest in flight', scores: loads };
      }
      const bound = loadBound(
        loads.reduce((a, b) => a + b, 0),
        candidates.length,
        context.affinityEpsilon(),
      );
      const { best, home, scores } = rendezvous(fnv1a32(key), candidates, loads, bound, nameHash);
      const node = candidates[best];
      if (node === undefined) return undefined;
      const reason = best === home ? `key home node (bound ${bound})` : `key home node full (bound ${bound}), next by hash`;
      return { node, reason, scores };
    },
  };
}
