// The model load/unload decision and the reconciler's plan, as tables over plain facts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decideModelAction, planReconcile, type ModelActionInput, type NodeFacts } from '#src/nodes/index.ts';

const node = (name: string, models: [string, boolean, number?][], extra: Partial<NodeFacts> = {}): NodeFacts => ({
  name,
  unavailable: undefined,
  canManage: true,
  busy: false,
  maxInstances: 2,
  models: models.map(([id, running, inFlight]) => ({ id, running, serving: true, inFlight: inFlight ?? 0 })),
  ...extra,
});

const base = (over: Partial<ModelActionInput>): ModelActionInput => ({
  action: 'load',
  model: 'b',
  node: undefined,
  nodes: [],
  queued: () => 0,
  pinned: () => false,
  ...over,
});

const CASES: { name: string; input: ModelActionInput; want: Record<string, unknown> }[] = [
  {
    name: 'load on a router with room',
    input: base({
      nodes: [
        node('r', [
          ['a', true],
          ['b', false],
        ]),
      ],
    }),
    want: { verdict: 'act', node: 'r', evict: undefined },
  },
  { name: 'load already running', input: base({ nodes: [node('r', [['b', true]])] }), want: { verdict: 'already', node: 'r' } },
  {
    name: 'load on a full router evicts an idle model',
    input: base({
      nodes: [
        node('r', [
          ['a', true],
          ['c', true],
          ['b', false],
        ]),
      ],
    }),
    want: { verdict: 'act', node: 'r', evict: 'a' },
  },
  {
    name: 'a model the reconciler keeps is evicted after the others',
    input: base({
      kept: (m) => m === 'a',
      nodes: [
        node('r', [
          ['a', true],
          ['c', true],
          ['b', false],
        ]),
      ],
    }),
    want: { verdict: 'act', evict: 'c' },
  },
  {
    name: 'a model held by an operator load is not evicted',
    input: base({
      nodes: [
        {
          ...node('r', [
            ['c', true],
            ['b', false],
          ]),
          models: [
            { id: 'a', running: true, serving: true, inFlight: 0, held: true },
            { id: 'c', running: true, serving: true, inFlight: 0 },
            { id: 'b', running: false, serving: true, inFlight: 0 },
          ],
        },
      ],
    }),
    want: { verdict: 'act', evict: 'c' },
  },
  {
    name: 'at equal room, the node whose victim nobody keeps',
    input: base({
      kept: (m) => m === 'w',
      nodes: [
        node('r', [
          ['p', true],
          ['w', true],
          ['b', false],
        ]),
        node('s', [
          ['q', true],
          ['x', true],
          ['b', false],
        ]),
      ],
      pinned: (m) => m === 'p' || m === 'q',
    }),
    want: { verdict: 'act', node: 's', evict: 'x' },
  },
  {
    name: 'a pinned idle model is not evicted',
    input: base({
      pinned: (m) => m === 'a',
      nodes: [
        node('r', [
          ['a', true],
          ['c', true],
          ['b', false],
        ]),
      ],
    }),
    want: { verdict: 'act', evict: 'c' },
  },
  {
    name: 'a busy or queued model is not evicted',
    input: base({
      queued: (m) => (m === 'c' ? 1 : 0),
      nodes: [
        node('r', [
          ['a', true, 1],
          ['c', true],
          ['b', false],
        ]),
      ],
    }),
    want: { verdict: 'refused', code: 'no_room' },
  },
  {
    name: 'the node with room wins',
    input: base({
      nodes: [
        node('full', [
          ['a', true],
          ['c', true],
          ['b', false],
        ]),
        node('free', [['b', false]]),
      ],
    }),
    want: { verdict: 'act', node: 'free' },
  },
  {
    name: 'asleep node',
    input: base({ node: 'r', nodes: [node('r', [['b', false]], { unavailable: 'asleep' })] }),
    want: { verdict: 'refused', code: 'node_unavailable' },
  },
  {
    name: 'kind cannot',
    input: base({ node: 'v', nodes: [node('v', [['b', false]], { canManage: false })] }),
    want: { verdict: 'refused', code: 'not_supported' },
  },
  {
    name: 'one operation per node',
    input: base({ nodes: [node('r', [['b', false]], { busy: true })] }),
    want: { verdict: 'refused', code: 'busy' },
  },
  {
    name: 'no node lists it',
    input: base({ nodes: [node('r', [['a', true]])] }),
    want: { verdict: 'refused', code: 'not_listed' },
  },
  {
    name: 'unknown node',
    input: base({ node: 'x', nodes: [node('r', [['b', false]])] }),
    want: { verdict: 'refused', code: 'unknown_node' },
  },
  {
    name: 'unload needs its node',
    input: base({ action: 'unload', nodes: [node('r', [['b', true]])] }),
    want: { verdict: 'refused', code: 'node_required' },
  },
  {
    name: 'unload idle',
    input: base({ action: 'unload', node: 'r', nodes: [node('r', [['b', true]])] }),
    want: { verdict: 'act', node: 'r' },
  },
  {
    name: 'unload in flight',
    input: base({ action: 'unload', node: 'r', nodes: [node('r', [['b', true, 2]])] }),
    want: { verdict: 'refused', code: 'in_flight' },
  },
  {
    name: 'unload queued',
    input: base({ action: 'unload', node: 'r', queued: () => 3, nodes: [node('r', [['b', true]])] }),
    want: { verdict: 'refused', code: 'queued' },
  },
  {
    name: 'unload pinned',
    input: base({ action: 'unload', node: 'r', pinned: () => true, nodes: [node('r', [['b', true]])] }),
    want: { verdict: 'refused', code: 'pinned' },
  },
  {
    name: 'unload on a node that cannot',
    input: base({ action: 'unload', node: 'v', nodes: [node('v', [['b', true]], { canManage: false })] }),
    want: { verdict: 'refused', code: 'not_supported' },
  },
];

for (const c of CASES) {
  test(`decideModelAction: ${c.name}`, () => {
    const got = decideModelAction(c.input) as unknown as Record<string, unknown>;
    for (const [key, value] of Object.entries(c.want)) assert.equal(got[key], value, `${key} in ${JSON.stringify(got)}`);
  });
}

const warm = (n: number, preload = false) => ({ pin: false, preload, warm: n });
const plan = (over: Partial<Parameters<typeof planReconcile>[0]>) =>
  planReconcile({
    desired: [],
    nodes: [],
    preloaded: () => false,
    heldOff: () => false,
    warmExcluded: () => false,
    queued: () => 0,
    pinned: () => false,
    held: () => false,
    heldOut: () => false,
    ...over,
  });

test('planReconcile: warm = 1 loads on one node, at most one load per node per round', () => {
  const steps = plan({
    desired: [
      { model: 'e', desired: warm(1) },
      { model: 'f', desired: warm(1) },
    ],
    nodes: [
      node('r', [
        ['e', false],
        ['f', false],
      ]),
    ],
  });
  assert.deepEqual(steps, [{ model: 'e', node: 'r', why: 'warm', evict: undefined }]);
});

test('planReconcile: enough warm copies means nothing to do; a held-off node is skipped', () => {
  assert.deepEqual(plan({ desired: [{ model: 'e', desired: warm(1) }], nodes: [node('r', [['e', true]])] }), []);
  assert.deepEqual(
    plan({
      desired: [{ model: 'e', desired: warm(1) }],
      heldOff: (n) => n === 'r',
      nodes: [node('r', [['e', false]]), node('s', [['e', false]])],
    }),
    [{ model: 'e', node: 's', why: 'warm', evict: undefined }],
  );
});

test('planReconcile: a warm load never evicts another wanted model (no thrashing)', () => {
  const nodes = [
    node(
      'r',
      [
        ['e', true],
        ['f', false],
      ],
      { maxInstances: 1 },
    ),
  ];
  assert.deepEqual(
    plan({
      desired: [
        { model: 'e', desired: warm(1) },
        { model: 'f', desired: warm(1) },
      ],
      nodes,
    }),
    [],
  );
});

test('planReconcile: preload loads on every node not preloaded yet, none while busy or asleep', () => {
  const nodes = [
    node('a', [['p', false]]),
    node('b', [['p', false]], { busy: true }),
    node('c', [['p', false]], { unavailable: 'asleep' }),
    node('d', [['p', false]]),
  ];
  assert.deepEqual(plan({ desired: [{ model: 'p', desired: warm(0, true) }], nodes, preloaded: (n) => n === 'd' }), [
    { model: 'p', node: 'a', why: 'preload', evict: undefined },
  ]);
});

test('planReconcile: a node marked warm = false is never chosen for warm', () => {
  assert.deepEqual(
    plan({ desired: [{ model: 'e', desired: warm(1) }], warmExcluded: (n) => n === 'r', nodes: [node('r', [['e', false]])] }),
    [],
  );
});
