// The live in-flight counts of a candidate list, read without touching each candidate's view.
// A fleet of 10,000 nodes spreads its views over the heap: reading `node.position` from each one,
// every request, is a cache miss per candidate (20–70 ns each). The route index hands out the same
// candidates array until something routing reads changes, so their positions are gathered once
// per array (a packed Int32Array, kept while the array lives) and each request reads two
// contiguous arrays: the positions and the registry's in-flight counts by position.

import { inFlightOf, type NodeView, type RoutingSnapshot } from '#src/nodes/index.ts';

export class CandidatePositions {
  /** Per candidates array: each candidate's position, or null when one has none (a test's views). */
  readonly #byArray = new WeakMap<readonly NodeView[], Int32Array | null>();

  /** The positions of `candidates`, aligned; undefined when some candidate has none. */
  of(candidates: readonly NodeView[]): Int32Array | undefined {
    let positions = this.#byArray.get(candidates);
    if (positions === undefined) {
      positions = gather(candidates);
      this.#byArray.set(candidates, positions);
    }
    return positions ?? undefined;
  }

  /** Each candidate's live in-flight count, aligned with the candidates (as `inFlights`), preallocated. */
  inFlights(candidates: readonly NodeView[], snapshot: RoutingSnapshot): number[] {
    const byPosition = snapshot.inFlightByPosition;
    const positions = byPosition === undefined ? undefined : this.of(candidates);
    const count = candidates.length;
    const out = new Array<number>(count);
    if (positions === undefined || byPosition === undefined) {
      for (let i = 0; i < count; i += 1) out[i] = inFlightOf(snapshot, candidates[i] as NodeView);
      return out;
    }
    for (let i = 0; i < count; i += 1) out[i] = byPosition[positions[i] as number] ?? 0;
    return out;
  }
}

function gather(candidates: readonly NodeView[]): Int32Array | null {
  const positions = new Int32Array(candidates.length);
  for (let i = 0; i < candidates.length; i += 1) {
    const position = candidates[i]?.position;
    if (position === undefined) return null;
    positions[i] = position;
  }
  return positions;
}
