// Micro-benchmark of one routing decision (the default filters + a selection policy) over fleets
// of 10, 100 and 1,000 nodes that each list 50 models. Run in its own process by run.ts
// (`node bench/route-decision.ts` prints one JSON line); each call is timed on its own.
//
// Two fleets per size: "all serve" (every node lists the requested model: every node reaches
// selection) and "half serve" (half the nodes lack it: half become exclusions with reasons).
// least-in-flight runs on every fleet, and at 1,000 nodes also with 1, 10 and 200 models per node and
// without the index (the whole pipeline, as /admin/explain and refusals run it); every other policy on the 1,000-node "all serve" fleet,
// with what it reads: load figures (least-loaded), a session key (affinity), a 2,000-character
// chat prompt whose prefix the tree has seen (cache-aware). At 1,000 and 10,000 nodes also with 64
// slots per node (per-slot KV pools): each node's room is then judged per request. The counts are
// a registry's (journalled); each pick takes a lease and the oldest of 64 returns, untimed.

import { CONFIG_DEFAULTS, POLICY_NAMES, type PolicyName } from '#src/config/index.ts';
import { createPolicy, defaultFilters, route, RouteIndex, type SelectionPolicy } from '#src/routing/index.ts';
import type { LoadReading, NodeView } from '#src/nodes/index.ts';
import { InFlightCounts } from '#src/nodes/in-flight-counts.ts';
import { node, policyContext, request, snapshotOf } from '#test/fixtures/builders.ts';
import { percentile } from './stats.ts';

export const FLEET_SIZES = [10, 100, 1000] as const;
export const MODELS_PER_NODE = 50;

export interface RouteDecisionResult {
  readonly policy: PolicyName;
  readonly nodes: number;
  /** Models each node lists (absent in older results: 50). */
  readonly modelsPerNode?: number;
  /** 'indexed': as the scheduler routes (with the index); 'whole pipeline': as /admin/explain and refusals do. */
  readonly path?: 'indexed' | 'whole pipeline';
  /** Slots each node reports for its loaded models (absent: none reported, no per-request capacity check). */
  readonly slots?: number;
  /** With slots: the KV pool ('per-slot': a budget of slots × context; 'unified': one context shared). */
  readonly kv?: KvPool;
  readonly fleet: 'all serve' | 'half serve';
  readonly calls: number;
  readonly p50Us: number;
  readonly p99Us: number;
  readonly meanUs: number;
}

/** Models per node in the per-model-count rows (1,000 nodes, all serve). */
export const MODEL_COUNTS = [1, 10, 50, 200] as const;

/**
 * Node i lists `perNode` of 2 × `perNode` model ids; `want` (the requested one, listed last) is on
 * all or half of them.
 */
function fleet(
  size: number,
  halfServe: boolean,
  perNode: number = MODELS_PER_NODE,
  slots?: number,
  kv: KvPool = 'per-slot',
): NodeView[] {
  const nodes: NodeView[] = [];
  const pool = Math.max(1, 2 * perNode - 1);
  for (let i = 0; i < size; i += 1) {
    const serves = !halfServe || i % 2 === 0;
    const models: string[] = [];
    for (let k = 0; k < perNode - 1; k += 1) models.push(`m${(i + k) % pool}`);
    models.push(serves ? WANTED : `other-${i}`);
    // Positioned as the registry's views are: live in-flight counts are read by position.
    const capacity = slots === undefined ? undefined : { role: 'single' as const, host: { nCtx: 32_768, slots } };
    nodes.push({
      ...node(`node-${i}`, { models, kind: 'vllm', ...(capacity === undefined ? {} : { capacity, kv }) }),
      position: i,
    });
  }
  return nodes;
}

const WANTED = 'wanted';
const PROMPT = `system: ${'You are a careful assistant. '.repeat(60)}user: `;

export interface MeasureOptions {
  readonly policy?: PolicyName;
  readonly modelsPerNode?: number;
  /** Route without the index (the whole pipeline per request). */
  readonly wholePipeline?: boolean;
  /** Each node reports this many slots for its loaded models (a server's parallel slots): capacity is checked per request. */
  readonly slots?: number;
  /** With slots: one KV pool per slot (the default) or one shared by all (llama-server's unified pool). */
  readonly kv?: KvPool;
  /** This policy instead of `createPolicy(policy)` (a variant measured beside the shipped one). */
  readonly selection?: SelectionPolicy;
}

type KvPool = 'per-slot' | 'unified';

export function measureRouteDecision(
  size: number,
  halfServe: boolean,
  budgetMs: number,
  options: MeasureOptions = {},
): RouteDecisionResult {
  const name = options.policy ?? 'least-in-flight';
  const perNode = options.modelsPerNode ?? MODELS_PER_NODE;
  const nodes = fleet(size, halfServe, perNode, options.slots, options.kv);
  const inFlight: Record<string, number> = {};
  nodes.forEach((n, i) => (inFlight[n.spec.name] = i % 3));
  // As the registry keeps them: counts by position, every change journalled (routing catches up from it).
  const counts = new InFlightCounts(CONFIG_DEFAULTS.upstream.maxConnections);
  counts.reset(nodes.map((_, i) => i % 3));
  const loads = new Map<string, LoadReading>();
  const now = snapshotOf([]).now;
  nodes.forEach((n, i) =>
    loads.set(n.spec.name, {
      ok: true,
      figures: { running: i % 4, waiting: i % 5, kvUsage: 0.5 },
      atMs: now,
      inFlightAtScrape: 0,
    }),
  );
  // As the gateway's: with upstream.max_connections (its default), which no node has reached.
  const snapshot = {
    ...snapshotOf(nodes, inFlight),
    inFlightByPosition: counts.byPosition,
    inFlightChanges: counts,
    connectionLimit: CONFIG_DEFAULTS.upstream.maxConnections,
    nodesAtConnectionLimit: 0,
    load: (n: string) => loads.get(n),
  };
  let turn = 0;
  const req = (): ReturnType<typeof request> => {
    turn += 1;
    return request(WANTED, {
      policy: name,
      affinityKey: `session-${turn % 500}`,
      promptPrefix: `${PROMPT}question ${turn % 500}`,
    });
  };
  const filters = defaultFilters();
  const policy = options.selection ?? createPolicy(name, policyContext());
  // As the scheduler routes: with the model → nodes index, which lives as long as the fleet's views.
  const index = options.wholePipeline === true ? undefined : new RouteIndex();
  // Each pick takes a lease (its count up) and the oldest of 64 outstanding ones returns (down),
  // untimed as the registry's claim is: the next decision catches up on those two changes.
  const outstanding: number[] = [];
  const lease = (position: number, by: number): void => counts.set(position, (counts.byPosition[position] ?? 0) + by);
  const decide = (): number => {
    const decision = route(req(), snapshot, filters, policy, index);
    if (decision.kind !== 'selected') throw new Error('benchmark fleet must be routable');
    return decision.node.position ?? 0;
  };
  const settle = (position: number): void => {
    lease(position, 1);
    outstanding.push(position);
    if (outstanding.length > 64) lease(outstanding.shift() as number, -1);
  };
  const warmupEnd = performance.now() + Math.min(300, budgetMs / 4);
  while (performance.now() < warmupEnd) settle(decide());
  const times: number[] = [];
  const end = performance.now() + budgetMs;
  let total = 0n;
  while (performance.now() < end && times.length < 200_000) {
    const started = process.hrtime.bigint();
    const picked = decide();
    const took = process.hrtime.bigint() - started;
    total += took;
    times.push(Number(took) / 1000);
    settle(picked);
  }
  return {
    policy: name,
    nodes: size,
    modelsPerNode: perNode,
    path: index === undefined ? 'whole pipeline' : 'indexed',
    ...(options.slots === undefined ? {} : { slots: options.slots, kv: options.kv ?? 'per-slot' }),
    fleet: halfServe ? 'half serve' : 'all serve',
    calls: times.length,
    p50Us: percentile(times, 50),
    p99Us: percentile(times, 99),
    meanUs: Number(total) / 1000 / times.length,
  };
}

/** What keeping the index up to date costs: building one (model) entry, and updating it after one node changed. */
export interface IndexUpdateResult {
  readonly nodes: number;
  readonly modelsPerNode: number;
  /** First request for a model: every node's slot built. */
  readonly buildMs: number;
  /** A request after one node's view changed (its slot rebuilt, the plan rederived), p50. */
  readonly oneNodeChangedUs: number;
  /** A request with nothing changed, p50 (the same fleet). */
  readonly steadyUs: number;
}

export function measureIndexUpdate(size: number, rounds = 300): IndexUpdateResult {
  const nodes = fleet(size, false);
  const filters = defaultFilters();
  const policy = createPolicy('least-in-flight', policyContext());
  const index = new RouteIndex();
  const base = {
    ...snapshotOf(nodes),
    inFlightByPosition: nodes.map(() => 0),
    connectionLimit: CONFIG_DEFAULTS.upstream.maxConnections,
  };
  const timed = (views: readonly NodeView[]): number => {
    const started = process.hrtime.bigint();
    route(request(WANTED), { ...base, nodes: views }, filters, policy, index);
    return Number(process.hrtime.bigint() - started) / 1000;
  };
  const buildMs = timed(nodes) / 1000;
  const changed: number[] = [];
  const steady: number[] = [];
  let views: readonly NodeView[] = nodes;
  for (let i = 0; i < rounds; i += 1) {
    // As the registry does: a new views array, one node's view a new object (here: one more failure seen).
    const at = i % size;
    const next = views.slice();
    const old = next[at] as NodeView;
    next[at] = { ...old, health: { ...old.health, fails: old.health.fails + 1 } };
    views = next;
    changed.push(timed(views));
    steady.push(timed(views));
  }
  return {
    nodes: size,
    modelsPerNode: MODELS_PER_NODE,
    buildMs,
    oneNodeChangedUs: percentile(changed, 50),
    steadyUs: percentile(steady, 50),
  };
}

if (import.meta.main) {
  const budgetMs = Number(process.argv[2] ?? 1000);
  const results: RouteDecisionResult[] = [];
  for (const size of FLEET_SIZES) for (const half of [false, true]) results.push(measureRouteDecision(size, half, budgetMs));
  results.push(measureRouteDecision(1000, false, budgetMs, { wholePipeline: true }));
  for (const modelsPerNode of MODEL_COUNTS)
    if (modelsPerNode !== MODELS_PER_NODE) results.push(measureRouteDecision(1000, false, budgetMs, { modelsPerNode }));
  for (const policy of POLICY_NAMES)
    if (policy !== 'least-in-flight') results.push(measureRouteDecision(1000, false, budgetMs, { policy }));
  // Issue 28's second routing target: 10,000 nodes × 50 models, least-in-flight, as the scheduler routes.
  results.push(measureRouteDecision(10_000, false, budgetMs));
  // With slots reported (llama-server's, vLLM's max_num_seqs): each node's room is checked per request.
  // A unified pool's budget is one context: a busy node's room needs the lease table (still O(busy nodes)).
  for (const kv of ['per-slot', 'unified'] as const)
    for (const size of [1000, 10_000]) results.push(measureRouteDecision(size, false, budgetMs, { slots: 64, kv }));
  const indexUpdate = measureIndexUpdate(1000);
  process.stdout.write(`${JSON.stringify({ event: 'route decision', results, indexUpdate })}\n`);
}
