// The index's fast path (route.ts, RouteIndex `fast`) must decide exactly as the whole pipeline: the same
// node, the same policy reason, and the same exclusions in the same order, over random fleets that
// mix every reason the pipeline knows, and after nodes change (the index is updated per node).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { NodeView, RoutingSnapshot } from '#src/nodes/index.ts';
import type { Usage } from '#src/capacity/index.ts';
import {
  defaultFilters,
  ExclusionCounter,
  leastInFlight,
  route,
  withRouterRoom,
  RouteIndex,
  type Filter,
  type RouterSwitchView,
} from '#src/routing/index.ts';
import { NOW, node, request, snapshotOf, type NodeOptions } from '#test/fixtures/builders.ts';
import { seededRandom } from '#src/sim/seeded-random.ts';

/** A small seeded generator (mulberry32), so a failure names its seed and replays. */
const rng = seededRandom;

const MODELS = ['a', 'b', 'c'];

function randomNode(name: string, position: number, r: () => number): NodeView {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(r() * items.length)] as T;
  const models = MODELS.filter(() => r() < 0.6);
  const onDemand: Record<string, string> = {};
  for (const m of MODELS) if (!models.includes(m) && r() < 0.25) onDemand[m] = pick(['unloaded', 'sleeping', 'loading']);
  const llama = r() < 0.5;
  const ctx = pick([0, 0, 256, 1024, 8192]);
  const options: NodeOptions = {
    health: pick(['healthy', 'healthy', 'healthy', 'degraded', 'dead', 'asleep']),
    group: r() < 0.15 ? 'g' : undefined,
    kind: llama ? 'llamacpp' : 'vllm',
    kv: pick(['unified', 'per-slot']),
    ...(r() < 0.1 ? {} : { models, onDemand }),
    ...(r() < 0.1 ? { phase: 'expired' as const, fails: 3 } : {}),
    capacity:
      r() < 0.5
        ? {
            role: r() < 0.2 ? 'router' : 'single',
            models: Object.fromEntries(models.map((m) => [m, { nCtx: ctx, slots: pick([undefined, 1, 2, 4]) }])),
          }
        : { role: 'single', host: ctx > 0 ? { nCtx: ctx, slots: pick([undefined, 1, 2]) } : undefined },
    contexts: r() < 0.3 ? { a: { nCtx: pick([128, 4096]), slots: 1 } } : {},
    ...(r() < 0.1 ? { ejectedUntil: NOW + pick([-1000, 5000]) } : {}),
  };
  const view = node(name, options);
  // Some routers are limited (max_instances): router-room judges them per request.
  const limited =
    view.capacity.role === 'router' && r() < 0.5
      ? { ...view.capacity, router: { maxInstances: 1, autoload: true } }
      : view.capacity;
  return { ...view, capacity: limited, position };
}

/** The same node after an answer moved its learned figures: a new view, every other field the same object. */
function learnedMoved(view: NodeView, r: () => number): NodeView {
  const model = MODELS[Math.floor(r() * MODELS.length)] as string;
  const decode = { tokens: 100 + Math.floor(r() * 900), decodeMs: 1000, firstTokenMs: undefined, samples: 8, atMs: NOW };
  const ratio = { low: 2 + r(), high: 4 + r(), samples: 8, atMs: NOW };
  return {
    ...view,
    decodeRates: { ...view.decodeRates, [model]: decode },
    ...(r() < 0.5 ? { tokenRatios: { ...view.tokenRatios, [model]: ratio } } : {}),
  };
}

function randomSnapshot(nodes: readonly NodeView[], r: () => number): RoutingSnapshot {
  const inFlight: Record<string, number> = {};
  const usage: Record<string, Usage> = {};
  for (const n of nodes) {
    inFlight[n.spec.name] = Math.floor(r() * 4);
    for (const m of MODELS)
      if (r() < 0.3) usage[`${n.spec.name}/${m}`] = { requests: 1 + Math.floor(r() * 3), tokens: Math.floor(r() * 3000) };
  }
  const base = snapshotOf(nodes, inFlight, usage);
  const limit = [undefined, 2, 3][Math.floor(r() * 3)];
  const counts = nodes.map((n) => inFlight[n.spec.name] ?? 0);
  // As the registry says it: how many nodes are at the limit (sometimes left out: unknown).
  const atLimit = limit === undefined || r() < 0.3 ? {} : { nodesAtConnectionLimit: counts.filter((c) => c >= limit).length };
  return { ...base, inFlightByPosition: counts, ...(limit === undefined ? {} : { connectionLimit: limit }), ...atLimit };
}

function randomRequest(r: () => number): ReturnType<typeof request> {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(r() * items.length)] as T;
  return request(pick([...MODELS, 'z']), {
    group: r() < 0.15 ? 'g' : undefined,
    promptTokens: pick([undefined, 10, 100, 600, 5000]),
    maxTokens: pick([undefined, 16, 400]),
    loadOnDemand: r() < 0.8,
    triedNodes: r() < 0.1 ? new Set(['n0', 'n1']) : new Set<string>(),
  });
}

/**
 * The scheduler's own pipeline (routing/pipeline.ts): router-room right after fits-context and
 * has-capacity aware of routers that queue themselves, over a random switch state.
 */
function schedulerPipeline(r: () => number): readonly Filter[] {
  const views = new Map<string, RouterSwitchView>();
  const lookup = (name: string): RouterSwitchView => {
    let view = views.get(name);
    if (view === undefined) {
      const pending = r() < 0.2 ? { model: MODELS[Math.floor(r() * 3)] as string, loaded: r() < 0.5 } : undefined;
      view = {
        pending,
        switchDue: r() < 0.2,
        failedLoads: new Map(r() < 0.1 ? [['a', 'timed out']] : []),
        routerQueues: r() < 0.3,
      };
      views.set(name, view);
    }
    return view;
  };
  return withRouterRoom(defaultFilters(), lookup);
}

for (const pipeline of ['default', 'with router-room'] as const) {
  test(`the fast path and the whole pipeline agree over random fleets (${pipeline})`, () => {
    let fastTaken = 0;
    let decisions = 0;
    for (let seed = 1; seed <= 150; seed += 1) {
      const r = rng(seed);
      const filters = pipeline === 'default' ? defaultFilters() : schedulerPipeline(r);
      const size = 1 + Math.floor(r() * 30);
      let nodes = Array.from({ length: size }, (_, i) => randomNode(`n${i}`, i, r));
      const index = new RouteIndex();
      const plain = leastInFlight();
      const indexed = leastInFlight();
      for (let round = 0; round < 4; round += 1) {
        const snapshot = randomSnapshot(nodes, r);
        for (let k = 0; k < 12; k += 1) {
          const req = randomRequest(r);
          if (index.fast(req, snapshot, filters) !== undefined) fastTaken += 1;
          decisions += 1;
          assert.deepEqual(
            route(req, snapshot, filters, indexed, index),
            route(req, snapshot, filters, plain),
            `seed ${seed}, round ${round}, request ${k}`,
          );
        }
        // Some nodes change between rounds: the index updates those slots only. Others only learn
        // (a new view whose learned figures moved): the index keeps their verdicts and hands out the new view.
        nodes = nodes.map((n, i) => {
          const roll = r();
          if (roll < 0.2) return randomNode(n.spec.name, i, r);
          return roll < 0.5 ? learnedMoved(n, r) : n;
        });
      }
    }
    // Not vacuous: a fair share of first attempts is decided by the plan.
    assert.ok(fastTaken > decisions / 5, `fast path taken ${fastTaken} of ${decisions}`);
  });
}

test('the fast path hands out the plan itself when every node has room (no copy per request)', () => {
  const nodes = [0, 1, 2].map((i) => ({ ...node(`n${i}`, { models: ['a'] }), position: i }));
  const snapshot = { ...snapshotOf(nodes), inFlightByPosition: [0, 0, 0], connectionLimit: 4 };
  const index = new RouteIndex();
  const filters = defaultFilters();
  const first = index.fast(request('a'), snapshot, filters);
  assert.equal(index.fast(request('a'), snapshot, filters)?.kept, first?.kept);
  assert.deepEqual(
    first?.kept.map((n) => n.spec.name),
    ['n0', 'n1', 'n2'],
  );
  // A node at its connection limit is dropped with its reason; a refusal takes the whole pipeline.
  const busy = { ...snapshot, inFlightByPosition: [4, 0, 0], inFlight: (name: string) => (name === 'n0' ? 4 : 0) };
  const decided = index.fast(request('a'), busy, filters);
  assert.deepEqual(
    decided?.kept.map((n) => n.spec.name),
    ['n1', 'n2'],
  );
  assert.deepEqual(
    decided?.excluded.map((e) => [e.node, e.code]),
    [['n0', 'connections_full']],
  );
  const full = { ...snapshot, inFlightByPosition: [4, 4, 4], inFlight: () => 4 };
  assert.equal(index.fast(request('a'), full, filters), undefined);
});

test('an entry is updated per changed node: unchanged slots are kept', () => {
  const nodes = [0, 1, 2].map((i) => ({ ...node(`n${i}`, { models: ['a'] }), position: i }));
  const index = new RouteIndex();
  const filters = defaultFilters();
  assert.deepEqual(
    index.fast(request('a'), snapshotOf(nodes), filters)?.kept.map((n) => n.spec.name),
    ['n0', 'n1', 'n2'],
  );
  const changed = [nodes[0] as NodeView, { ...node('n1', { models: ['a'], health: 'dead' }), position: 1 }, nodes[2] as NodeView];
  const decided = index.fast(request('a'), snapshotOf(changed), filters);
  assert.deepEqual(
    decided?.kept.map((n) => n.spec.name),
    ['n0', 'n2'],
  );
  assert.deepEqual(
    decided?.excluded.map((e) => [e.node, e.code]),
    [['n1', 'dead']],
  );
  // A new node set (one more node) rebuilds the entry.
  const grown = [...changed, { ...node('n3', { models: ['a'] }), position: 3 }];
  assert.deepEqual(
    index.fast(request('a'), snapshotOf(grown), filters)?.kept.map((n) => n.spec.name),
    ['n0', 'n2', 'n3'],
  );
});

test('a view that differs only in learned figures keeps its verdicts, and routing hands out the new view', () => {
  const nodes = [0, 1, 2].map((i) => ({ ...node(`n${i}`, { models: ['a'] }), position: i }));
  let asked = 0;
  const filters = defaultFilters().map((f) =>
    f.reads === 'model' ? { ...f, apply: (...args: Parameters<Filter['apply']>) => ((asked += 1), f.apply(...args)) } : f,
  );
  const index = new RouteIndex();
  index.fast(request('a'), snapshotOf(nodes), filters);
  const askedFirst = asked;
  assert.ok(askedFirst > 0, 'the head filters judged each node once');
  // An answer moved n1's decode rate: a new view, nothing else about it changed.
  const learned = {
    ...nodes[1],
    decodeRates: { a: { tokens: 500, decodeMs: 1000, firstTokenMs: undefined, samples: 9, atMs: NOW } },
  };
  const taught = [nodes[0] as NodeView, learned as NodeView, nodes[2] as NodeView];
  const decided = index.fast(request('a'), snapshotOf(taught), filters);
  assert.equal(asked, askedFirst, 'no head filter was asked again for a learned figure');
  assert.equal(decided?.kept[1], learned, 'the new view, with its new figure, is what routing hands out');
  // Anything else about the node changing still asks the head filters again.
  const dead = { ...learned, health: { ...learned.health, status: 'dead' as const } };
  const after = index.fast(request('a'), snapshotOf([nodes[0] as NodeView, dead as NodeView, nodes[2] as NodeView]), filters);
  assert.ok(asked > askedFirst, 'a health change is judged again');
  assert.deepEqual(
    after?.kept.map((n) => n.spec.name),
    ['n0', 'n2'],
  );
});

test('metrics count a shared (frozen) exclusion list once, and a per-request list every time', () => {
  const counter = new ExclusionCounter();
  const nodes = [0, 1, 2].map((i) => ({ ...node(`n${i}`, { models: i === 0 ? ['b'] : ['a'] }), position: i }));
  const index = new RouteIndex();
  const filters = defaultFilters();
  const snapshot = snapshotOf(nodes);
  const first = index.fast(request('a'), snapshot, filters);
  const second = index.fast(request('a'), snapshot, filters);
  assert.equal(second?.excluded, first?.excluded, 'the same frozen list for every first attempt');
  const counted = counter.of(first?.excluded ?? []);
  assert.deepEqual(counted, [['missing', 1]]);
  assert.equal(counter.of(second?.excluded ?? []), counted, 'counted once');
  const perRequest = [{ node: 'x', filter: 'has-capacity', code: 'no_slot' as const }];
  assert.notEqual(counter.of(perRequest), counter.of(perRequest), 'a mutable list is counted each time');
  assert.deepEqual(counter.of(perRequest), [['no_slot', 1]]);
});
