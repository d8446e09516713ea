// GET /admin/models as a pure projection: desired against observed per model (warm_now, satisfied,
// the reconciler's next steps) and per node (what it runs, the switch under way).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { modelsView, type NodeFacts } from '#src/nodes/index.ts';

const node = (
  name: string,
  running: readonly string[],
  listed: readonly string[],
  unavailable?: string,
  serving = true,
): NodeFacts => ({
  name,
  unavailable,
  canManage: true,
  busy: false,
  maxInstances: 2,
  models: [
    ...running.map((id) => ({ id, running: true, serving, inFlight: 0 })),
    ...listed.map((id) => ({ id, running: false, serving, inFlight: 0 })),
  ],
});

test('warm counts only nodes that are up; the plan shows as next; a switch shows on its node', () => {
  const view = modelsView({
    nodes: [node('a', ['m'], ['n']), node('b', ['m'], [], 'asleep'), node('c', [], ['m', 'n'])],
    desired: new Map([
      ['m', { pin: false, preload: false, warm: 2 }],
      ['n', { pin: true, preload: false, warm: 0 }],
    ]),
    failures: [],
    nowMs: 0,
    plan: [{ model: 'm', node: 'c', why: 'warm', evict: undefined }],
    switches: [['c', { model: 'm', action: 'load', by: 'reconciler', loaded: false, victim: undefined }]],
  });
  const m = view.models.find((r) => r.model === 'm');
  assert.deepEqual(
    { warm_now: m?.warm_now, satisfied: m?.satisfied, next: m?.next },
    { warm_now: 1, satisfied: false, next: [{ action: 'load', node: 'c', why: 'warm' }] },
  );
  assert.equal(view.models.find((r) => r.model === 'n')?.satisfied, true, 'a pin alone holds');
  assert.deepEqual(view.nodes.find((n) => n.name === 'c')?.switch, {
    action: 'load',
    model: 'm',
    by: 'reconciler',
    loaded: false,
    victim: null,
  });
  assert.deepEqual(view.nodes.find((n) => n.name === 'a')?.loaded, ['m']);
  assert.equal(view.nodes.find((n) => n.name === 'a')?.switch, null);
});

test('a node that does not serve now (dead, listing expired) is never listed as running or serving a model: it is named apart', () => {
  const view = modelsView({
    nodes: [node('up', ['m'], []), node('dead', ['m'], ['n'], 'dead (ECONNREFUSED)', false)],
    desired: new Map(),
    failures: [],
    nowMs: 0,
  });
  const m = view.models.find((r) => r.model === 'm');
  assert.deepEqual(
    { loaded_on: m?.loaded_on, on_demand: m?.on_demand, unavailable_on: m?.unavailable_on },
    { loaded_on: ['up'], on_demand: [], unavailable_on: ['dead'] },
  );
  assert.deepEqual(view.models.find((r) => r.model === 'n')?.unavailable_on, ['dead']);
  assert.deepEqual(view.nodes.find((n) => n.name === 'dead')?.loaded, [], 'a dead node runs nothing we could use');
});

test('each node names the requests in flight per model (only models with some): what an unload would wait for', () => {
  const busy: NodeFacts = {
    ...node('r', ['m', 'n'], ['o']),
    models: [
      { id: 'm', running: true, serving: true, inFlight: 2 },
      { id: 'n', running: true, serving: true, inFlight: 0 },
      { id: 'o', running: false, serving: true, inFlight: 0 },
    ],
  };
  const view = modelsView({ nodes: [busy, node('s', ['m'], [])], desired: new Map(), failures: [], nowMs: 0 });
  assert.deepEqual(view.nodes.find((n) => n.name === 'r')?.in_flight, { m: 2 });
  assert.deepEqual(view.nodes.find((n) => n.name === 's')?.in_flight, {});
});

test("a load a router that queues itself holds our requests for shows as that node's switch (by the router), with its queue", () => {
  const view = modelsView({
    nodes: [node('r', ['a'], ['b', 'c']), node('s', ['a'], ['b'])],
    desired: new Map(),
    failures: [],
    nowMs: 0,
    switches: [['s', { model: 'b', action: 'load', by: 'request', loaded: false, victim: 'a' }]],
    routerLoads: new Map([
      [
        'r',
        [
          { model: 'b', requests: 3, waitedMs: 1_200.4 },
          { model: 'c', requests: 1, waitedMs: 300 },
        ],
      ],
      ['s', [{ model: 'b', requests: 1, waitedMs: 10 }]],
    ]),
  });
  const r = view.nodes.find((n) => n.name === 'r');
  assert.deepEqual(r?.switch, { action: 'load', model: 'b', by: 'router', loaded: false, victim: null });
  assert.deepEqual(r?.router_queue, [
    { model: 'b', requests: 3, waited_ms: 1_200 },
    { model: 'c', requests: 1, waited_ms: 300 },
  ]);
  // A ticket of the gateway's own stands first.
  assert.equal(view.nodes.find((n) => n.name === 's')?.switch?.by, 'request');
  const plain = modelsView({ nodes: [node('r', ['a'], ['b'])], desired: new Map(), failures: [], nowMs: 0 });
  assert.deepEqual(
    plain.nodes.map((n) => [n.switch, n.router_queue]),
    [[null, []]],
  );
});
