// Micro-benchmark of one routing decision (the default filters + least-in-flight selection) over
// fleets of 10, 100 and 1,000 nodes that each list 50 models. Run in its own process by run.ts
// (`node bench/route-decision.ts` prints one JSON line); each call is timed on its own.
//
// Two fleets per size: "all serve" (every node lists the requested model: every node reaches
// selection) and "half serve" (half the nodes lack it: half become exclusions with reasons).

import { defaultFilters, leastInFlight, route } from '#src/routing/index.ts';
import type { NodeView } from '#src/nodes/index.ts';
import { node, request, snapshotOf } from '#test/fixtures/builders.ts';
import { percentile } from './stats.ts';

export const FLEET_SIZES = [10, 100, 1000] as const;
export const MODELS_PER_NODE = 50;

export interface RouteDecisionResult {
  readonly nodes: number;
  readonly fleet: 'all serve' | 'half serve';
  readonly calls: number;
  readonly p50Us: number;
  readonly p99Us: number;
  readonly meanUs: number;
}

/** Node i lists 50 of 100 model ids; `m99` (the requested one, listed last) is on all or half of them. */
function fleet(size: number, halfServe: boolean): NodeView[] {
  const nodes: NodeView[] = [];
  for (let i = 0; i < size; i += 1) {
    const serves = !halfServe || i % 2 === 0;
    const models: string[] = [];
    for (let k = 0; k < MODELS_PER_NODE - 1; k += 1) models.push(`m${(i + k) % 99}`);
    models.push(serves ? 'm99' : `other-${i}`);
    nodes.push(node(`node-${i}`, { models }));
  }
  return nodes;
}

export function measureRouteDecision(size: number, halfServe: boolean, budgetMs: number): RouteDecisionResult {
  const nodes = fleet(size, halfServe);
  const inFlight: Record<string, number> = {};
  nodes.forEach((n, i) => (inFlight[n.spec.name] = i % 3));
  const snapshot = snapshotOf(nodes, inFlight);
  const req = request('m99');
  const filters = defaultFilters();
  const policy = leastInFlight();
  const decide = (): void => {
    const decision = route(req, snapshot, filters, policy);
    if (decision.kind !== 'selected') throw new Error('benchmark fleet must be routable');
  };
  const warmupEnd = performance.now() + Math.min(300, budgetMs / 4);
  while (performance.now() < warmupEnd) decide();
  const times: number[] = [];
  const end = performance.now() + budgetMs;
  let total = 0n;
  while (performance.now() < end && times.length < 200_000) {
    const started = process.hrtime.bigint();
    decide();
    const took = process.hrtime.bigint() - started;
    total += took;
    times.push(Number(took) / 1000);
  }
  return {
    nodes: size,
    fleet: halfServe ? 'half serve' : 'all serve',
    calls: times.length,
    p50Us: percentile(times, 50),
    p99Us: percentile(times, 99),
    meanUs: Number(total) / 1000 / times.length,
  };
}

if (import.meta.main) {
  const budgetMs = Number(process.argv[2] ?? 1000);
  const results: RouteDecisionResult[] = [];
  for (const size of FLEET_SIZES) for (const half of [false, true]) results.push(measureRouteDecision(size, half, budgetMs));
  process.stdout.write(`${JSON.stringify({ event: 'route decision', results })}\n`);
}
