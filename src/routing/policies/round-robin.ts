// Each candidate in turn, whatever its load: for fleets of equal nodes and short, even requests.

import type { SelectionPolicy } from './selection-policy.ts';

export function roundRobin(): SelectionPolicy {
  let turn = 0;
  return {
    name: 'round-robin',
    choose(_req, candidates) {
      if (candidates.length === 0) return undefined;
      const index = turn % candidates.length;
      const node = candidates[index];
      if (node === undefined) return undefined;
      turn = (turn + 1) % Number.MAX_SAFE_INTEGER;
      // The score is how many turns until the candidate comes up (0 = now).
      const scores = candidates.map((_, i) => (i - index + candidates.length) % candidates.length);
      return { node, reason: `turn ${index + 1} of ${candidates.length}`, scores };
    },
  };
}
