// NodeRegistry.snapshot(): taken on every admission, so it builds one object and no closures; what
// it fixes at the time it is taken (views, time, nodes at the limit) and what it reads live (in-flight
// counts, usage, load) is unchanged.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '#src/core/clock.ts';
import { EventBus } from '#src/core/events.ts';
import { NodeRegistry, type RegistryEvents } from '#src/nodes/index.ts';
import { spec } from '#test/fixtures/builders.ts';

function registryOf(clock = new ManualClock()): NodeRegistry {
  return new NodeRegistry({ clock, events: new EventBus<RegistryEvents>(), failThreshold: 3, connectionLimit: 1 });
}

test('snapshots of one node set share their readers: none is built per snapshot', () => {
  const registry = registryOf();
  registry.setNodes([spec('a'), spec('b')]);
  const [first, second] = [registry.snapshot(), registry.snapshot()];
  assert.equal(first.inFlight, second.inFlight, 'inFlight');
  assert.equal(first.usage, second.usage, 'usage');
  assert.equal(first.load, second.load, 'load');
});

test('a snapshot fixes its time, views and nodes at the limit, and reads counts and usage live', () => {
  const clock = new ManualClock();
  const registry = registryOf(clock);
  registry.setNodes([spec('a')]);
  const taken = registry.snapshot();
  const at = taken.now;
  clock.advance(1_000);
  const lease = registry.claim('a', 'm', 10);
  assert.ok(lease);
  assert.equal(taken.now, at);
  assert.equal(taken.nodesAtConnectionLimit, 0, 'fixed when taken');
  assert.equal(registry.snapshot().nodesAtConnectionLimit, 1);
  assert.equal(taken.inFlight('a'), 1, 'live');
  assert.deepEqual(taken.usage('a', 'm'), { requests: 1, tokens: 10 });
  lease.release();
  assert.equal(taken.inFlight('a'), 0);
});

test('a snapshot taken before a reload keeps reading the node set it was taken from', () => {
  const registry = registryOf();
  registry.setNodes([spec('a')]);
  const before = registry.snapshot();
  registry.setNodes([spec('b')]);
  const lease = registry.claim('b', 'm', 1);
  assert.ok(lease);
  assert.equal(before.inFlight('b'), 0, 'b is not in the set the old snapshot was taken from');
  assert.equal(registry.snapshot().inFlight('b'), 1);
  assert.deepEqual(
    before.nodes.map((v) => v.spec.name),
    ['a'],
  );
  assert.notEqual(before.inFlight, registry.snapshot().inFlight, 'a new node set, new readers');
  lease.release();
});
