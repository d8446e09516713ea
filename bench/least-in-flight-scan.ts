// Issue 39, product question 2: what least-in-flight's acceleration structures (a candidates array
// kept ordered by load and caught up from the registry's journal of count changes; packed candidate
// positions) save per routing decision, against a plain scan of every candidate's count, at 10,
// 100, 1,000 and 10,000 nodes × 50 models. The whole decision is timed (route(): the route index's
// fast path, then the policy), as bench/route-decision.ts does, with a lease taken per pick and
// the oldest of 64 returned. Variants alternate within each round, in one process.
//
//   node bench/least-in-flight-scan.ts [budget ms per cell (400)] [rounds (3)]
//
// Prints one JSON line: per variant and fleet size, the median over rounds of p50, p99 and mean (µs).

import { leastInFlight, pickLowest, type SelectionPolicy } from '#src/routing/index.ts';
import { inFlightOf, type NodeView, type RoutingSnapshot } from '#src/nodes/index.ts';
import { measureRouteDecision } from './route-decision.ts';

const SIZES = [10, 100, 1000, 10_000] as const;

/** The reference: every candidate's count read through its view's position, lowest wins, ties in turn. */
function plainScan(): SelectionPolicy {
  let turn = 0;
  return {
    name: 'least-in-flight',
    reads: [],
    choose(_req, candidates, snapshot) {
      const scores = countsOf(candidates, snapshot, undefined);
      const picked = pickLowest(candidates, scores, turn);
      if (picked === undefined) return undefined;
      turn = (turn + 1) % Number.MAX_SAFE_INTEGER;
      return {
        node: picked.node,
        reason: `fewest in flight (${inFlightOf(snapshot, picked.node)}, ${picked.ties} tied)`,
        scores,
      };
    },
  };
}

/** The scan over positions gathered once per candidates array (a packed Int32Array). */
function packedScan(): SelectionPolicy {
  let turn = 0;
  const packed = new WeakMap<readonly NodeView[], Int32Array>();
  return {
    name: 'least-in-flight',
    reads: [],
    choose(_req, candidates, snapshot) {
      let positions = packed.get(candidates);
      if (positions === undefined) {
        positions = Int32Array.from(candidates, (n) => n.position ?? 0);
        packed.set(candidates, positions);
      }
      const scores = countsOf(candidates, snapshot, positions);
      const picked = pickLowest(candidates, scores, turn);
      if (picked === undefined) return undefined;
      turn = (turn + 1) % Number.MAX_SAFE_INTEGER;
      return {
        node: picked.node,
        reason: `fewest in flight (${inFlightOf(snapshot, picked.node)}, ${picked.ties} tied)`,
        scores,
      };
    },
  };
}

function countsOf(candidates: readonly NodeView[], snapshot: RoutingSnapshot, positions: Int32Array | undefined): number[] {
  const byPosition = snapshot.inFlightByPosition as ArrayLike<number>;
  const count = candidates.length;
  const out = new Array<number>(count);
  if (positions !== undefined) for (let i = 0; i < count; i += 1) out[i] = byPosition[positions[i] as number] ?? 0;
  else for (let i = 0; i < count; i += 1) out[i] = byPosition[(candidates[i] as NodeView).position ?? 0] ?? 0;
  return out;
}

const VARIANTS: Readonly<Record<string, () => SelectionPolicy>> = {
  shipped: leastInFlight,
  'packed scan': packedScan,
  'plain scan': plainScan,
};

interface Cell {
  readonly variant: string;
  readonly nodes: number;
  readonly p50Us: number[];
  readonly p99Us: number[];
  readonly meanUs: number[];
}

const median = (xs: readonly number[]): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

if (import.meta.main) {
  const budgetMs = Number(process.argv[2] ?? 400);
  const rounds = Number(process.argv[3] ?? 3);
  const cells = new Map<string, Cell>();
  for (let round = 0; round < rounds; round += 1)
    for (const nodes of SIZES)
      for (const [variant, make] of Object.entries(VARIANTS)) {
        const r = measureRouteDecision(nodes, false, budgetMs, { selection: make() });
        const key = `${variant}@${nodes}`;
        const cell = cells.get(key) ?? { variant, nodes, p50Us: [], p99Us: [], meanUs: [] };
        cell.p50Us.push(r.p50Us);
        cell.p99Us.push(r.p99Us);
        cell.meanUs.push(r.meanUs);
        cells.set(key, cell);
        process.stderr.write(`round ${round} ${key}: p50 ${r.p50Us.toFixed(2)} µs, mean ${r.meanUs.toFixed(2)} µs\n`);
      }
  const rows = [...cells.values()].map((c) => ({
    variant: c.variant,
    nodes: c.nodes,
    p50Us: median(c.p50Us),
    p99Us: median(c.p99Us),
    meanUs: median(c.meanUs),
  }));
  process.stdout.write(`${JSON.stringify({ event: 'least-in-flight scan', budgetMs, rounds, rows })}\n`);
}
