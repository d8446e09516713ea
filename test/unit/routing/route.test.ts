// One routing decision (route.ts): every exclusion with its reason, the policy's pick, what the
// decision keeps for the request's record (routeSummary), and the route index that decides alike
// (route-fast-path.test.ts holds its fast path over random fleets).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  defaultFilters,
  filterCandidates,
  leastInFlight,
  MAX_SUMMARY_ENTRIES,
  pickLeastInFlight,
  route,
  RouteIndex,
  ROUTE_INDEX_MAX_ENTRIES,
  routeSummary,
} from '#src/routing/index.ts';
import type { NodeView } from '#src/nodes/index.ts';
import { node, request, snapshotOf } from '#test/fixtures/builders.ts';

function reasons(excluded: readonly { node: string; code: string }[]): Record<string, string> {
  return Object.fromEntries(excluded.map((e) => [e.node, e.code]));
}

test('reports why every node was excluded when none can serve the model', () => {
  const snapshot = snapshotOf([
    node('a', { health: 'dead' }),
    node('b', { models: ['other'] }),
    node('c', { models: [] }),
    node('d', { phase: 'expired', models: ['llama'] }),
    node('e', { group: 'gpu' }),
  ]);
  const decision = route(request('llama'), snapshot, defaultFilters(), leastInFlight());
  assert.equal(decision.kind, 'unroutable');
  assert.deepEqual(reasons(decision.excluded), { a: 'dead', b: 'missing', c: 'empty', d: 'expired', e: 'group_mismatch' });
});

test('an untried node lets every model through; a known node only its listed ids', () => {
  const snapshot = snapshotOf([node('fresh'), node('known', { models: ['x'] })]);
  const decision = route(request('y'), snapshot, defaultFilters(), leastInFlight());
  assert.equal(decision.kind, 'selected');
  assert.equal(decision.kind === 'selected' && decision.node.spec.name, 'fresh');
});

test('degraded nodes are used only when no healthy node can serve', () => {
  const both = snapshotOf([node('slow', { health: 'degraded' }), node('fine')]);
  const first = route(request('m'), both, defaultFilters(), leastInFlight());
  assert.equal(first.kind === 'selected' && first.node.spec.name, 'fine');
  assert.deepEqual(reasons(first.excluded), { slow: 'degraded' });
  const onlyDegraded = snapshotOf([node('slow', { health: 'degraded' }), node('fine', { models: ['other'] })]);
  const second = route(request('m'), onlyDegraded, defaultFilters(), leastInFlight());
  assert.equal(second.kind === 'selected' && second.node.spec.name, 'slow');
});

test('a node already tried for this request is not chosen again', () => {
  const snapshot = snapshotOf([node('a'), node('b')]);
  const decision = route(request('m', { triedNodes: new Set(['a']) }), snapshot, defaultFilters(), leastInFlight());
  assert.equal(decision.kind === 'selected' && decision.node.spec.name, 'b');
  assert.deepEqual(reasons(decision.excluded), { a: 'already_tried' });
});

test('grouped models go only to nodes of their group, ungrouped ones only to ungrouped nodes', () => {
  const snapshot = snapshotOf([node('plain'), node('big', { group: 'gpu' })]);
  const grouped = route(request('m', { group: 'gpu' }), snapshot, defaultFilters(), leastInFlight());
  assert.equal(grouped.kind === 'selected' && grouped.node.spec.name, 'big');
  const plain = route(request('m'), snapshot, defaultFilters(), leastInFlight());
  assert.equal(plain.kind === 'selected' && plain.node.spec.name, 'plain');
});

test('least in-flight wins, and ties rotate round-robin', () => {
  const nodes = [node('a'), node('b'), node('c')];
  assert.equal(pickLeastInFlight(nodes, (n) => ({ a: 2, b: 1, c: 3 })[n] ?? 0, 0)?.spec.name, 'b');
  const policy = leastInFlight();
  const snapshot = snapshotOf(nodes);
  const picks = [0, 1, 2, 3].map(() => policy.choose(request('m'), nodes, snapshot)?.node.spec.name);
  assert.deepEqual(picks, ['a', 'b', 'c', 'a']);
  assert.equal(policy.choose(request('m'), [], snapshot), undefined);
});

// What a routing decision keeps for the request's record: the policy, the reason, every candidate
// with its score (rounded; null when not finite) and every exclusion, each bounded.

test('every candidate scored, every exclusion with its code, bounded', () => {
  const a = node('a');
  const b = node('b');
  const summary = routeSummary(
    'least-in-flight',
    { node: a, reason: 'fewest in flight (0, 2 tied)', scores: [0.123456, Infinity] },
    [a, b],
    [{ node: 'c', filter: 'alive', code: 'dead', detail: 'last probe: ECONNREFUSED' }],
  );
  assert.deepEqual(summary, {
    policy: 'least-in-flight',
    reason: 'fewest in flight (0, 2 tied)',
    scores: [
      { node: 'a', score: 0.1235 },
      { node: 'b', score: null },
    ],
    excluded: [{ node: 'c', code: 'dead', detail: 'last probe: ECONNREFUSED' }],
  });
  const many = Array.from({ length: MAX_SUMMARY_ENTRIES + 4 }, (_, i) => node(`n${i}`));
  const big = routeSummary(
    'round-robin',
    { node: many[0] ?? a, reason: 'turn', scores: many.map(() => 1) },
    many,
    many.map((n) => ({ node: n.spec.name, filter: 'f', code: 'dead' as const })),
  );
  assert.equal(big.scores?.length, MAX_SUMMARY_ENTRIES);
  assert.equal(big.excluded?.length, MAX_SUMMARY_ENTRIES);
  assert.equal(big.more, 8);
});

// The route index: per (model, group), the pipeline's verdicts kept between requests.
// A fleet where every reason of the pipeline's head and tail occurs, interleaved in fleet order.
const FLEET: readonly NodeView[] = [
  node('dead', { health: 'dead', models: ['llama'] }),
  node('other', { models: ['other'] }),
  node('gpu', { group: 'gpu', models: ['llama', 'big'] }),
  node('small', { models: ['llama'], kind: 'llamacpp', capacity: { role: 'single', host: { nCtx: 100, slots: 1 } } }),
  node('fresh'),
  node('degraded', { health: 'degraded', models: ['llama', 'big'] }),
  node('empty', { models: [] }),
  node('expired', { phase: 'expired', models: ['llama'] }),
  node('asleep', { health: 'asleep', models: ['llama'] }),
  node('full', { models: ['llama'] }),
  node('router', { onDemand: { llama: 'unloaded' } }),
  node('gpu-dead', { group: 'gpu', health: 'dead' }),
];

const CASES: readonly { readonly name: string; readonly req: ReturnType<typeof request> }[] = [
  { name: 'a listed model', req: request('llama') },
  { name: 'a prompt too large for one node', req: request('llama', { promptTokens: 500 }) },
  { name: 'a model only the untried node may serve', req: request('nobody-lists-this') },
  { name: 'a grouped model', req: request('big', { group: 'gpu' }) },
  { name: 'a failover (tried nodes: the slow path)', req: request('llama', { triedNodes: new Set(['fresh', 'full']) }) },
  { name: 'no load on demand', req: request('llama', { loadOnDemand: false }) },
];

for (const { name, req } of CASES) {
  test(`the index decides exactly as the whole pipeline, exclusions in the same order: ${name}`, () => {
    const snapshot = snapshotOf(FLEET, { full: 1 }, { 'full/llama': { requests: 4, tokens: 0 } });
    const index = new RouteIndex();
    for (let round = 0; round < 3; round += 1) {
      // Two policies with the same history: least-in-flight breaks ties in turn.
      const plain = route(req, snapshot, defaultFilters(), leastInFlight());
      const indexed = route(req, snapshot, defaultFilters(), leastInFlight(), index);
      assert.deepEqual(indexed, plain);
    }
  });
}

test('the index is reused while the views stay the same and rebuilt when they change', () => {
  const filters = defaultFilters();
  const index = new RouteIndex();
  const first = snapshotOf([node('a', { models: ['m'] }), node('b', { models: ['x'] })]);
  const head = index.prefix(request('m'), first, filters);
  assert.deepEqual(
    head?.kept.map((n) => n.spec.name),
    ['a'],
  );
  assert.deepEqual(
    head?.excluded.map((e) => [e.node, e.code]),
    [['b', 'missing']],
  );
  assert.equal(index.prefix(request('m'), { ...first, now: first.now + 1 }, filters), head, 'same views: same entry');
  // The registry hands out a new views array when discovery or health changed.
  const relisted = snapshotOf([node('a', { models: ['m'] }), node('b', { models: ['x', 'm'] })]);
  assert.deepEqual(
    index.prefix(request('m'), relisted, filters)?.kept.map((n) => n.spec.name),
    ['a', 'b'],
  );
  const died = snapshotOf([node('a', { models: ['m'], health: 'dead' }), node('b', { models: ['x', 'm'] })]);
  assert.deepEqual(
    filterCandidates(request('m'), died, filters, index).excluded.map((e) => [e.node, e.code]),
    [['a', 'dead']],
  );
});

test('a failover takes the slow path; the index has nothing to say for it', () => {
  const snapshot = snapshotOf([node('a', { models: ['m'] })]);
  assert.equal(new RouteIndex().prefix(request('m', { triedNodes: new Set(['a']) }), snapshot, defaultFilters()), undefined);
});

test('the index holds a bounded number of (model, group) entries', () => {
  const filters = defaultFilters();
  const index = new RouteIndex();
  const snapshot = snapshotOf([node('a', { models: ['m0'] })]);
  const first = index.prefix(request('m0'), snapshot, filters);
  for (let i = 1; i < ROUTE_INDEX_MAX_ENTRIES; i += 1) index.prefix(request(`m${i}`), snapshot, filters);
  assert.equal(index.prefix(request('m0'), snapshot, filters), first, 'still cached at the limit');
  index.prefix(request('one-too-many'), snapshot, filters);
  const again = index.prefix(request('m0'), snapshot, filters);
  assert.notEqual(again, first, 'started over past the limit');
  assert.deepEqual(again, first);
});
