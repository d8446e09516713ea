import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  defaultFilters,
  leastInFlight,
  route,
  RouteIndex,
  ROUTE_INDEX_MAX_ENTRIES,
  filterCandidates,
} from '#src/routing/index.ts';
import type { NodeView } from '#src/nodes/index.ts';
import { node, request, snapshotOf } from '#test/fixtures/builders.ts';

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
