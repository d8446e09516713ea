// The scheduler's pipeline as every host shares it: router-room right after fits-context, the
// failover pipeline without has-capacity, and the rooms that carry the switch state to a worker.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultFilters } from '#src/routing/index.ts';
import { alternativeFilters, routerRoomsOf, switchViewOf, withRouterRoom } from '#src/routing/index.ts';
import { node, request, snapshotOf } from '#test/fixtures/builders.ts';

const noSwitch = switchViewOf(undefined);

test('router-room goes right after fits-context, and the failover pipeline drops only has-capacity', () => {
  const pipeline = withRouterRoom(defaultFilters(), () => noSwitch);
  const names = pipeline.map((f) => f.name);
  assert.equal(names[names.indexOf('fits-context') + 1], 'router-room');
  assert.deepEqual(
    alternativeFilters(pipeline).map((f) => f.name),
    names.filter((n) => n !== 'has-capacity'),
  );
});

test('rooms list only limited routers, with their busy models and switch state, as plain data', () => {
  const limited = node('r', {
    kind: 'llamacpp',
    models: ['x'],
    onDemand: { m: 'unloaded' },
    capacity: { role: 'router', router: { maxInstances: 1, autoload: true } },
  });
  const unlimited = node('u', {
    kind: 'llamacpp',
    models: ['x'],
    capacity: { role: 'router', router: { maxInstances: 0, autoload: true } },
  });
  const plain = node('v', { models: ['x'] });
  const snapshot = snapshotOf(
    [limited, unlimited, plain],
    {},
    { 'r/x': { requests: 1, tokens: 10 }, 'u/x': { requests: 2, tokens: 0 } },
  );
  const view = {
    pending: { model: 'm', loaded: false },
    switchDue: true,
    failedLoads: new Map([['y', 'timed out']]),
    pinned: new Set(['p']),
    wanted: new Set(['w']),
  };
  const rooms = routerRoomsOf(snapshot, () => view);
  assert.deepEqual(rooms, [
    {
      node: 'r',
      pending: { model: 'm', loaded: false },
      switchDue: true,
      failedLoads: [['y', 'timed out']],
      busy: ['x'],
      pinned: ['p'],
      wanted: ['w'],
    },
  ]);
  assert.deepEqual(structuredClone(rooms), rooms, 'crosses a MessagePort unchanged');
  assert.deepEqual(switchViewOf(rooms[0]), view);
  assert.deepEqual(noSwitch, { pending: undefined, switchDue: false, failedLoads: new Map() });
});

test('a router that queues itself is held only by the connection limit, not by its slots; the others by both', () => {
  const queuing = node('q', {
    kind: 'llamacpp',
    models: ['x'],
    onDemand: { m: 'unloaded' },
    capacity: { role: 'router', router: { maxInstances: 1, autoload: true }, models: { x: { nCtx: 4096, slots: 2 } } },
  });
  const holding = node('h', {
    kind: 'llamacpp',
    models: ['x'],
    onDemand: { m: 'unloaded' },
    capacity: { role: 'router', router: { maxInstances: 1, autoload: true }, models: { x: { nCtx: 4096, slots: 2 } } },
  });
  const pipeline = withRouterRoom(defaultFilters(), (name) => (name === 'q' ? { ...noSwitch, routerQueues: true } : noSwitch));
  const capacity = pipeline.find((f) => f.name === 'has-capacity');
  assert.ok(capacity !== undefined);
  const req = request('x');
  const full = { 'q/x': { requests: 64, tokens: 0 }, 'h/x': { requests: 64, tokens: 0 } };
  const judged = capacity.apply(req, [queuing, holding], snapshotOf([queuing, holding], {}, full));
  assert.deepEqual(
    judged.kept.map((n) => n.spec.name),
    ['q'],
  );
  assert.deepEqual(
    judged.excluded.map((e) => [e.node, e.code]),
    [['h', 'no_slot']],
  );
  const pooled = { ...snapshotOf([queuing, holding], { q: 4, h: 0 }, {}), connectionLimit: 4 };
  const limited = capacity.apply(req, [queuing, holding], pooled);
  assert.deepEqual(
    limited.excluded.map((e) => [e.node, e.code]),
    [['q', 'connections_full']],
  );
});
