// One routing decision (route.ts): every exclusion with its reason, the policy's pick, and what the
// decision keeps for the request's record (routeSummary).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  defaultFilters,
  leastInFlight,
  MAX_SUMMARY_ENTRIES,
  pickLeastInFlight,
  route,
  routeSummary,
} from '#src/routing/index.ts';
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
