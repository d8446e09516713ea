// Each candidate in turn, whatever its load: for fleets of equal nodes and short, even requests.

import type { SelectionPolicy } from './selection-policy.ts';
import type { RequestFeature } from './selection-policy.ts';

/** It reads no request feature: the candidates and the snapshot decide. */
export const ROUND_ROBIN_READS: readonly RequestFeature[] = Object.freeze([]);

export function roundRobin(): SelectionPolicy {
  let turn = 0;
  return {
    name: 'round-robin',
    reads: ROUND_ROBIN_READS,
    choose(_req, candidates) {
      if (candidates.length === 0) return undefined;
      const index = turn % candidates.length;
      const node = candidates[index];
      if (node === undefined) return undefined;
      turn = (turn + 1) % Number.MAX_SAFE_INTEGER;
      // The score is how many turns until the candidate comes up (0 = now).
      const scores = new Array<number>(candidates.length);
      for (let i = 0; i < candidates.length; i += 1) scores[i] = i >= index ? i - index : i - index + candidates.length;
      return { node, reason: `turn ${index + 1} of ${candidates.length}`, scores };
    },
  };
}
