// Micro-benchmark of one routing decision (the default filters + a selection policy) over fleets
// of 10, 100 and 1,000 nodes that each list 50 models. Run in its own process by run.ts
// (`node bench/route-decision.ts` prints one JSON line); each call is timed on its own.
//
// Two fleets per size: "all serve" (every node lists the requested model: every node reaches
// selection) and "half serve" (half the nodes lack it: half become exclusions with reasons).
// least-in-flight runs on every fleet; every other policy on the 1,000-node "all serve" fleet,
// with what it reads: load figures (least-loaded), a session key (affinity), a 2,000-character
// chat prompt whose prefix the tree has seen (cache-aware).

import { CONFIG_DEFAULTS, POLICY_NAMES, type PolicyName } from '#src/config/index.ts';
import { createPolicy, defaultFilters, route, RouteIndex } from '#src/routing/index.ts';
import type { LoadReading, NodeView } from '#src/nodes/index.ts';
import { node, policyContext, request, snapshotOf } from '#test/fixtures/builders.ts';
import { percentile } from './stats.ts';

export const FLEET_SIZES = [10, 100, 1000] as const;
export const MODELS_PER_NODE = 50;

export interface RouteDecisionResult {
  readonly policy: PolicyName;
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
    // Positioned as the registry's views are: live in-flight counts are read by position.
    nodes.push({ ...node(`node-${i}`, { models, kind: 'vllm' }), position: i });
  }
  return nodes;
}

const PROMPT = `system: ${'You are a careful assistant. '.repeat(60)}user: `;

export function measureRouteDecision(size: number, halfServe: boolean, budgetMs: number, name: PolicyName = 'least-in-flight'): RouteDecisionResult {
  const nodes = fleet(size, halfServe);
  const inFlight: Record<string, number> = {};
  nodes.forEach((n, i) => (inFlight[n.spec.name] = i % 3));
  const inFlightByPosition = nodes.map((_, i) => i % 3);
  const loads = new Map<string, LoadReading>();
  const now = snapshotOf([]).now;
  nodes.forEach((n, i) => loads.set(n.spec.name, { ok: true, figures: { running: i % 4, waiting: i % 5, kvUsage: 0.5 }, atMs: now, inFlightAtScrape: 0 }));
  // As the gateway's: with upstream.max_connections (its default), so the connection check runs too.
  const snapshot = { ...snapshotOf(nodes, inFlight), inFlightByPosition, connectionLimit: CONFIG_DEFAULTS.upstream.maxConnections, load: (n: string) => loads.get(n) };
  let turn = 0;
  const req = (): ReturnType<typeof request> => {
    turn += 1;
    return request('m99', { policy: name, affinityKey: `session-${turn % 500}`, promptPrefix: `${PROMPT}question ${turn % 500}` });
  };
  const filters = defaultFilters();
  const policy = createPolicy(name, policyContext());
  // As the scheduler routes: with the model → nodes index, which lives as long as the fleet's views.
  const index = new RouteIndex();
  const decide = (): void => {
    const decision = route(req(), snapshot, filters, policy, index);
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
    policy: name,
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
  for (const name of POLICY_NAMES) if (name !== 'least-in-flight') results.push(measureRouteDecision(1000, false, budgetMs, name));
  process.stdout.write(`${JSON.stringify({ event: 'route decision', results })}\n`);
}
