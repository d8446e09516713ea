import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '#src/core/clock.ts';
import { EventBus } from '#src/core/events.ts';
import { inFlightOf, NodeRegistry, type RegistryEvents } from '#src/nodes/index.ts';
import { InFlightCounts, LeaseTable } from '#src/nodes/in-flight-counts.ts';
import { spec } from '#test/fixtures/builders.ts';

test('counts by position track how many nodes are at the connection limit', () => {
  const counts = new InFlightCounts(2);
  counts.reset([0, 1, 2]);
  assert.equal(counts.atLimit, 1);
  counts.set(1, 2);
  assert.equal(counts.atLimit, 2);
  counts.set(1, 3);
  assert.equal(counts.atLimit, 2, 'over the limit counts once');
  counts.set(2, 1);
  counts.set(1, 1);
  assert.equal(counts.atLimit, 0);
  counts.set(-1, 9);
  assert.deepEqual(counts.byPosition, [0, 1, 1], 'a retiring node (no position) changes nothing');
  counts.setLimit(1);
  assert.equal(counts.atLimit, 2);
  counts.setLimit(undefined);
  assert.equal(counts.atLimit, 0);
});

test('the registry publishes live in-flight counts by view position, across a change of the node set', () => {
  const registry = new NodeRegistry({
    clock: new ManualClock(0),
    events: new EventBus<RegistryEvents>(),
    failThreshold: 3,
    connectionLimit: 2,
  });
  registry.setNodes([spec('a'), spec('b'), spec('c')]);
  const leases = [registry.claim('b', 'm', 1), registry.claim('b', 'm', 1), registry.claim('c', 'm', 1)];
  let snapshot = registry.snapshot();
  assert.deepEqual(
    snapshot.nodes.map((n) => [n.spec.name, n.position, inFlightOf(snapshot, n)]),
    [
      ['a', 0, 0],
      ['b', 1, 2],
      ['c', 2, 1],
    ],
  );
  assert.equal(snapshot.nodesAtConnectionLimit, 1);
  // b leaves the set while its requests finish: the others move up, b's count no longer counts.
  registry.setNodes([spec('a'), spec('c')]);
  snapshot = registry.snapshot();
  assert.deepEqual(
    snapshot.nodes.map((n) => [n.spec.name, n.position, inFlightOf(snapshot, n)]),
    [
      ['a', 0, 0],
      ['c', 1, 1],
    ],
  );
  assert.equal(snapshot.nodesAtConnectionLimit, 0);
  for (const lease of leases) lease?.release();
  snapshot = registry.snapshot();
  assert.deepEqual(
    snapshot.nodes.map((n) => inFlightOf(snapshot, n)),
    [0, 0],
  );
  assert.equal(registry.retiringInFlight(), 0);
  registry.setConnectionLimit(1);
  registry.claim('a', 'm', 1);
  assert.equal(registry.snapshot().nodesAtConnectionLimit, 1);
});

// The lease table: slot and context-budget usage per (node, model).
test('usage is counted until released, exactly once', () => {
  const table = new LeaseTable();
  const a = table.acquire('n', 'm', 100);
  const b = table.acquire('n', 'm', 50);
  assert.deepEqual(table.usage('n', 'm'), { requests: 2, tokens: 150 });
  a.release();
  a.release();
  assert.deepEqual(table.usage('n', 'm'), { requests: 1, tokens: 50 });
  b.release();
  assert.equal(table.totalRequests(), 0);
  assert.deepEqual(table.entries(), []);
});
