import { test } from 'node:test';
import assert from 'node:assert/strict';
import { classifyUnroutable, defaultFilters, largestContext, leastInFlight, route } from '#src/routing/index.ts';
import { node, request, snapshotOf } from '#test/fixtures/builders.ts';

const single = (name: string, nCtx: number, slots = 4) =>
  node(name, { models: ['m'], kind: 'llamacpp', capacity: { role: 'single', host: { nCtx, slots } } });

function reasons(excluded: readonly { node: string; code: string }[]): Record<string, string> {
  return Object.fromEntries(excluded.map((e) => [e.node, e.code]));
}

test('a long prompt goes to the node whose context fits it', () => {
  const snapshot = snapshotOf([single('small', 1024), single('big', 16384)]);
  const decision = route(request('m', { promptTokens: 3000 }), snapshot, defaultFilters(), leastInFlight());
  assert.equal(decision.kind === 'selected' && decision.node.spec.name, 'big');
  assert.deepEqual(reasons(decision.excluded), { small: 'too_small' });
});

test('prompt + max_tokens must fit, and a prompt equal to the context does not', () => {
  const snapshot = snapshotOf([single('n', 1024)]);
  assert.equal(
    route(request('m', { promptTokens: 1000, maxTokens: 24 }), snapshot, defaultFilters(), leastInFlight()).kind,
    'selected',
  );
  assert.equal(
    route(request('m', { promptTokens: 1000, maxTokens: 25 }), snapshot, defaultFilters(), leastInFlight()).kind,
    'unroutable',
  );
  assert.equal(route(request('m', { promptTokens: 1024 }), snapshot, defaultFilters(), leastInFlight()).kind, 'unroutable');
});

test('an unknown context counts as fitting', () => {
  const unknown = node('u', { models: ['m'] });
  assert.equal(
    route(request('m', { promptTokens: 1_000_000 }), snapshotOf([unknown]), defaultFilters(), leastInFlight()).kind,
    'selected',
  );
});

test('a node with the model loaded wins over one that would load it on demand', () => {
  const snapshot = snapshotOf([node('router', { onDemand: { m: 'unloaded' } }), single('loaded', 4096)]);
  const decision = route(request('m', { promptTokens: 10 }), snapshot, defaultFilters(), leastInFlight());
  assert.equal(decision.kind === 'selected' && decision.node.spec.name, 'loaded');
  assert.deepEqual(reasons(decision.excluded), { router: 'not_loaded' });
});

test('when no loaded node can fit the prompt, an on-demand node whose last known context fits takes it', () => {
  const router = node('router', {
    onDemand: { m: 'unloaded' },
    capacity: { role: 'router' },
    contexts: { m: { nCtx: 32768, slots: 1 } },
  });
  const decision = route(
    request('m', { promptTokens: 9000 }),
    snapshotOf([single('loaded', 4096), router]),
    defaultFilters(),
    leastInFlight(),
  );
  assert.equal(decision.kind === 'selected' && decision.node.spec.name, 'router');
});

test('with load_on_demand off, nodes without the model loaded are excluded as not_loaded', () => {
  const snapshot = snapshotOf([node('router', { onDemand: { m: 'sleeping' } })]);
  const decision = route(request('m', { loadOnDemand: false }), snapshot, defaultFilters(), leastInFlight());
  assert.equal(decision.kind, 'unroutable');
  assert.deepEqual(reasons(decision.excluded), { router: 'not_loaded' });
});

test('a full node makes the request wait instead of failing', () => {
  const snapshot = snapshotOf([single('n', 4096, 1)], {}, { 'n/m': { requests: 1, tokens: 100 } });
  const decision = route(request('m', { promptTokens: 10 }), snapshot, defaultFilters(), leastInFlight());
  assert.equal(decision.kind, 'unroutable');
  assert.deepEqual(reasons(decision.excluded), { n: 'no_slot' });
  assert.equal(classifyUnroutable(decision.excluded), 'busy');
});

test('a unified KV pool refuses a request whose tokens would overflow what is in flight', () => {
  const snapshot = snapshotOf([single('n', 4096, 4)], {}, { 'n/m': { requests: 2, tokens: 3000 } });
  const decision = route(request('m', { promptTokens: 1000, maxTokens: 200 }), snapshot, defaultFilters(), leastInFlight());
  assert.deepEqual(reasons(decision.excluded), { n: 'no_budget' });
  const fits = route(request('m', { promptTokens: 800, maxTokens: 200 }), snapshot, defaultFilters(), leastInFlight());
  assert.equal(fits.kind, 'selected');
});

test('unroutable decisions mean: wait, 400 for a prompt that can never fit, else 503', () => {
  const cases: [{ node: string; filter: string; code: Parameters<typeof classifyUnroutable>[0][number]['code'] }[], string][] = [
    [
      [
        { node: 'a', filter: 'f', code: 'too_small' },
        { node: 'b', filter: 'f', code: 'no_slot' },
      ],
      'busy',
    ],
    [
      [
        { node: 'a', filter: 'f', code: 'too_small' },
        { node: 'b', filter: 'f', code: 'missing' },
      ],
      'too_large',
    ],
    [
      [
        { node: 'a', filter: 'f', code: 'too_small' },
        { node: 'b', filter: 'f', code: 'dead' },
      ],
      'unavailable',
    ],
    [[{ node: 'a', filter: 'f', code: 'missing' }], 'unavailable'],
    [[], 'unavailable'],
  ];
  for (const [excluded, kind] of cases) assert.equal(classifyUnroutable(excluded), kind, JSON.stringify(excluded));
});

test('the largest context counts loaded nodes and the last known figure of on-demand ones', () => {
  const router = node('router', { onDemand: { m: 'unloaded' }, contexts: { m: { nCtx: 32768, slots: 1 } } });
  assert.equal(largestContext(snapshotOf([single('a', 4096), router, node('other', { models: ['x'] })]), 'm'), 32768);
});
