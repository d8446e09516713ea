import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fleetRow, modelRows, nodeState, type FleetInput } from '#src/admin/dashboard/fleet-rows.ts';
import type { NodeView } from '#src/nodes/index.ts';
import { NOW, node } from '#test/fixtures/builders.ts';

const input = (views: readonly NodeView[], extra: Partial<FleetInput> = {}): FleetInput => ({
  views,
  inFlight: () => 0,
  usage: () => ({ requests: 0, tokens: 0 }),
  queueDepths: {},
  now: NOW,
  ...extra,
});

test('a node’s state word: ejection and a wake under way win over the health status', () => {
  const waking = { ...node('w', { health: 'asleep' }), wake: { lastSentAt: NOW - 1_000, wakingUntil: NOW + 5_000 } };
  const table: [string, NodeView, string][] = [
    ['healthy', node('a'), 'healthy'],
    ['dead', node('a', { health: 'dead' }), 'dead'],
    ['ejected until later', node('a', { ejectedUntil: NOW + 1 }), 'ejected'],
    ['ejection over', node('a', { ejectedUntil: NOW }), 'healthy'],
    ['asleep', node('a', { health: 'asleep' }), 'asleep'],
    ['asleep, wake sent', waking, 'waking'],
    ['asleep, wake window over', { ...waking, wake: { lastSentAt: NOW - 9_000, wakingUntil: NOW } }, 'asleep'],
  ];
  for (const [what, view, want] of table) assert.equal(nodeState(view, NOW), want, what);
});

test('a fleet row: per model residency, context and free budget; queue depth of the models it serves', () => {
  const view = node('gpu', {
    kind: 'llamacpp',
    models: ['a'],
    onDemand: { b: 'unloaded' },
    capacity: { role: 'router', models: { a: { nCtx: 8192, slots: 4 } } },
  });
  const row = fleetRow(
    view,
    input([view], {
      inFlight: () => 2,
      usage: (_n, m) => ({ requests: 1, tokens: m === 'a' ? 3000 : 0 }),
      queueDepths: { a: 3, b: 1, c: 7 },
    }),
  );
  assert.equal(row.state, 'healthy');
  assert.equal(row.in_flight, 2);
  assert.equal(row.slots, 4);
  assert.equal(row.queue, 4);
  assert.deepEqual(row.models, [
    { id: 'a', residency: 'loaded', n_ctx: 8192, slots: 4, free_ctx: 5192 },
    { id: 'b', residency: 'on_demand', n_ctx: null, slots: null, free_ctx: null },
  ]);
});

test('an asleep node’s models are shown as available after a wake; its error carries its time', () => {
  const base = node('pc', { health: 'asleep', models: ['a'] });
  const view = { ...base, health: { ...base.health, lastError: 'connect ECONNREFUSED', changedAt: NOW - 60_000 } };
  const row = fleetRow(view, input([view]));
  assert.equal(row.models[0]?.residency, 'asleep');
  assert.equal(row.last_error, 'connect ECONNREFUSED');
  assert.equal(row.last_error_at, NOW - 60_000);
});

test('models: where each is served now, on demand or after a wake, with aliases and the largest context', () => {
  const views = [
    node('a', { models: ['m'], capacity: { role: 'single', models: { m: { nCtx: 4096, slots: 1 } } } }),
    node('b', { models: ['m'], capacity: { role: 'single', models: { m: { nCtx: 16384, slots: 1 } } } }),
    node('c', { onDemand: { m: 'unloaded', z: 'unloaded' } }),
    node('d', { health: 'asleep', models: ['z'] }),
  ];
  const rows = views.map((v) => fleetRow(v, input(views)));
  assert.deepEqual(
    modelRows(
      rows,
      new Map([
        ['big', 'm'],
        ['mm', 'm'],
      ]),
      { z: 2 },
    ),
    [
      {
        id: 'm',
        aliases: ['big', 'mm'],
        nodes: ['a', 'b'],
        on_demand: ['c'],
        after_wake: [],
        largest_ctx: 16384,
        queue: 0,
        sites: [],
        stale_sites: [],
      },
      {
        id: 'z',
        aliases: [],
        nodes: [],
        on_demand: ['c'],
        after_wake: ['d'],
        largest_ctx: null,
        queue: 2,
        sites: [],
        stale_sites: [],
      },
    ],
  );
});

test('models with [mesh]: fresh sites serve with their ctx and on-demand flag, stale ones are only named; remote-only models get a row', () => {
  const views = [node('a', { models: ['m'], capacity: { role: 'single', models: { m: { nCtx: 4096, slots: 1 } } } })];
  const rows = views.map((v) => fleetRow(v, input(views)));
  const remote = [
    { site: 'west', fresh: false, models: [{ id: 'm', ctx: 65_536 }, { id: 'gone' }] },
    {
      site: 'east',
      fresh: true,
      models: [
        { id: 'm', ctx: 32_768 },
        { id: 'only-east', on_demand: true },
      ],
    },
  ];
  assert.deepEqual(modelRows(rows, new Map([['oe', 'only-east']]), {}, remote), [
    {
      id: 'gone',
      aliases: [],
      nodes: [],
      on_demand: [],
      after_wake: [],
      largest_ctx: null,
      queue: 0,
      sites: [],
      stale_sites: ['west'],
    },
    {
      id: 'm',
      aliases: [],
      nodes: ['a'],
      on_demand: [],
      after_wake: [],
      largest_ctx: 4096,
      queue: 0,
      sites: [{ site: 'east', ctx: 32_768, on_demand: false }],
      stale_sites: ['west'],
    },
    {
      id: 'only-east',
      aliases: ['oe'],
      nodes: [],
      on_demand: [],
      after_wake: [],
      largest_ctx: null,
      queue: 0,
      sites: [{ site: 'east', ctx: null, on_demand: true }],
      stale_sites: [],
    },
  ]);
});

test("a fleet row names the node's source: static for the [[nodes]] list, else its [[node_sources]] entry", () => {
  const listed = node('a');
  const found = { ...node('k8s-vllm-0'), spec: { ...node('k8s-vllm-0').spec, source: 'k8s' } };
  assert.deepEqual(
    [listed, found].map((view) => fleetRow(view, input([listed, found])).source),
    ['static', 'k8s'],
  );
});
