// Least loaded by the node's own word: the requests its /metrics says are running and waiting
// (waiting ones count double: they have not even started), plus the requests the gateway sent it
// since that scrape, with KV-cache use breaking ties. A node whose figures are missing or stale is
// scored by the gateway's in-flight count instead, and the note says why (explain shows it).

import { serverKind } from '#src/kinds/index.ts';
import { inFlightOf, judgeLoad, type NodeView, type RoutingSnapshot } from '#src/nodes/index.ts';
import { pickLowest } from './least-in-flight.ts';
import type { PolicyContext, SelectionPolicy } from './selection-policy.ts';
import type { RequestFeature } from './selection-policy.ts';

/** A queued request weighs this many running ones. */
export const WAITING_WEIGHT = 2;

export interface LoadScore {
  readonly score: number;
  /** Why the node is scored by in-flight only; undefined = by its own figures. */
  readonly degraded: string | undefined;
}

/** It reads no request feature: the candidates and the snapshot decide. */
export const LEAST_LOADED_READS: readonly RequestFeature[] = Object.freeze([]);

/** Pure: one candidate's load score (lower is better). */
export function loadScore(node: NodeView, snapshot: RoutingSnapshot, staleAfterMs: number): LoadScore {
  const name = node.spec.name;
  const inFlight = inFlightOf(snapshot, node);
  const verdict = judgeLoad(snapshot.load?.(name), serverKind(node.spec.kind).load !== undefined, snapshot.now, staleAfterMs);
  if (!verdict.usable) return { score: inFlight, degraded: verdict.why };
  const { running, waiting, kvUsage } = verdict.figures;
  const sentSince = Math.max(0, inFlight - verdict.inFlightAtScrape);
  return { score: running + WAITING_WEIGHT * waiting + sentSince + (kvUsage ?? 0), degraded: undefined };
}

export function leastLoaded(context: PolicyContext): SelectionPolicy {
  let turn = 0;
  return {
    name: 'least-loaded',
    reads: LEAST_LOADED_READS,
    choose(_req, candidates, snapshot) {
      const staleAfterMs = context.loadStaleAfterMs();
      const judged = candidates.map((node) => loadScore(node, snapshot, staleAfterMs));
      const scores = judged.map((j) => j.score);
      const picked = pickLowest(candidates, scores, turn);
      if (picked === undefined) return undefined;
      turn = (turn + 1) % Number.MAX_SAFE_INTEGER;
      const own = judged[candidates.indexOf(picked.node)];
      const score = Math.round((own?.score ?? 0) * 100) / 100;
      const reason =
        own?.degraded === undefined ? `lowest load ${score}` : `lowest load ${score} (in flight only: ${own.degraded})`;
      return {
        node: picked.node,
        reason: reason.replace(/[^\x20-\x3a\x3c-\x7e]/g, '?'),
        scores,
        notes: judged.map((j) => j.degraded),
      };
    },
  };
}
