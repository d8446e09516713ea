// The operator against the reconciler, as tables over plain facts: the reconciler's plan with the
// operator's holds (a held model is never unloaded on its node to restore a warm one; once the hold
// ends it is), whether an admin load would be undone (judgeOperatorLoad), the holds' clock, and a
// reconciler's rounds on an injected clock.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  judgeOperatorLoad,
  judgeOperatorUnload,
  MemoryHoldStore,
  ModelReconciler,
  OperatorHolds,
  planReconcile,
  type DesiredModel,
  type NodeFacts,
  type ReconcileInput,
} from '#src/nodes/index.ts';

const node = (name: string, models: [string, boolean][], max = 2): NodeFacts => ({
  name,
  unavailable: undefined,
  canManage: true,
  busy: false,
  maxInstances: max,
  models: models.map(([id, running]) => ({ id, running, serving: true, inFlight: 0 })),
});

const PIN = { pin: true, preload: false, warm: 0 };
const WARM = { pin: false, preload: false, warm: 1 };
const PRELOAD = { pin: false, preload: true, warm: 0 };

const input = (over: Partial<ReconcileInput> & { desired: DesiredModel[]; nodes: NodeFacts[] }): ReconcileInput => {
  const pins = new Set(over.desired.filter((d) => d.desired.pin).map((d) => d.model));
  return {
    preloaded: () => false,
    heldOff: () => false,
    warmExcluded: () => false,
    queued: () => 0,
    pinned: (m) => pins.has(m),
    held: () => false,
    heldOut: () => false,
    ...over,
  };
};

const heldOn =
  (node: string, model: string) =>
  (n: string, m: string): boolean =>
    n === node && m === model;

// r: at most 2 models; p pinned, w warm, z the operator's.
const DESIRED: DesiredModel[] = [
  { model: 'p', desired: PIN },
  { model: 'w', desired: WARM },
];
const afterOperatorLoad = (): NodeFacts[] => [
  node('r', [
    ['p', true],
    ['z', true],
    ['w', false],
  ]),
];

const PLAN_CASES: { name: string; input: ReconcileInput; want: unknown }[] = [
  {
    name: "without a hold the warm model is restored by unloading the operator's load",
    input: input({ desired: DESIRED, nodes: afterOperatorLoad() }),
    want: [{ model: 'w', node: 'r', why: 'warm', evict: 'z' }],
  },
  {
    name: 'the hold suppresses restoring the warm model on its node',
    input: input({ desired: DESIRED, nodes: afterOperatorLoad(), held: heldOn('r', 'z') }),
    want: [],
  },
  {
    name: 'while the hold lasts the warm model may be restored on another node with room',
    input: input({ desired: DESIRED, nodes: [...afterOperatorLoad(), node('s', [['w', false]])], held: heldOn('r', 'z') }),
    want: [{ model: 'w', node: 's', why: 'warm', evict: undefined }],
  },
  {
    name: 'the hold never overrides a pin: with the held model and a pinned one, nothing is unloaded',
    input: input({
      desired: [...DESIRED, { model: 'q', desired: WARM }],
      nodes: [
        node('r', [
          ['p', true],
          ['z', true],
          ['w', false],
          ['q', false],
        ]),
      ],
      held: heldOn('r', 'z'),
    }),
    want: [],
  },
  {
    name: 'a hold on a model that is not running there holds nothing: the free slot is used',
    input: input({
      desired: DESIRED,
      nodes: [
        node('r', [
          ['p', true],
          ['z', false],
          ['w', false],
        ]),
      ],
      held: heldOn('r', 'z'),
    }),
    want: [{ model: 'w', node: 'r', why: 'warm', evict: undefined }],
  },
  {
    name: 'a hold on another node does not protect the model here',
    input: input({ desired: DESIRED, nodes: afterOperatorLoad(), held: heldOn('s', 'z') }),
    want: [{ model: 'w', node: 'r', why: 'warm', evict: 'z' }],
  },
];

for (const c of PLAN_CASES) {
  test(`planReconcile with holds: ${c.name}`, () => {
    assert.deepEqual(planReconcile(c.input), c.want);
  });
}

test('the hold never overrides a pin: even a hold on the pinned model leaves it pinned, and the held model is never chosen over it', () => {
  const steps = planReconcile(
    input({ desired: DESIRED, nodes: afterOperatorLoad(), held: (n, m) => n === 'r' && (m === 'z' || m === 'p') }),
  );
  assert.deepEqual(steps, []);
  for (const step of planReconcile(input({ desired: DESIRED, nodes: afterOperatorLoad() }))) assert.notEqual(step.evict, 'p');
});

const HOLD_MS = 600_000;

const JUDGE_CASES: {
  name: string;
  load: { model: string; node: string; evict: string | undefined };
  input: ReconcileInput;
  stands: boolean;
  reclaim?: string;
}[] = [
  {
    name: 'evicting the warm model on a full router with a pinned one: undone',
    load: { model: 'z', node: 'r', evict: 'w' },
    input: input({
      desired: DESIRED,
      nodes: [
        node('r', [
          ['p', true],
          ['w', true],
          ['z', false],
        ]),
      ],
    }),
    stands: false,
    reclaim: 'w',
  },
  {
    name: 'the warm model has room on another node: it goes there, the load stands',
    load: { model: 'z', node: 'r', evict: 'w' },
    input: input({
      desired: DESIRED,
      nodes: [
        node('r', [
          ['p', true],
          ['w', true],
          ['z', false],
        ]),
        node('s', [['w', false]]),
      ],
    }),
    stands: true,
  },
  {
    name: 'the warm model runs elsewhere too: the warm count holds, the load stands',
    load: { model: 'z', node: 'r', evict: 'w' },
    input: input({
      desired: DESIRED,
      nodes: [
        node('r', [
          ['p', true],
          ['w', true],
          ['z', false],
        ]),
        node('s', [['w', true]], 1),
      ],
    }),
    stands: true,
  },
  {
    name: 'taking the free slot a missing warm model needs: undone',
    load: { model: 'z', node: 'r', evict: undefined },
    input: input({
      desired: DESIRED,
      nodes: [
        node('r', [
          ['p', true],
          ['w', false],
          ['z', false],
        ]),
      ],
    }),
    stands: false,
    reclaim: 'w',
  },
  {
    name: 'evicting an idle model nobody keeps: stands',
    load: { model: 'z', node: 'r', evict: 'x' },
    input: input({
      desired: DESIRED,
      nodes: [
        node('r', [
          ['p', true],
          ['x', true],
          ['z', false],
        ]),
        node('s', [['w', true]]),
      ],
    }),
    stands: true,
  },
  {
    name: 'evicting a model already preloaded there: the reconciler does not preload it again, stands',
    load: { model: 'z', node: 'r', evict: 'l' },
    input: input({
      desired: [{ model: 'l', desired: PRELOAD }],
      nodes: [
        node(
          'r',
          [
            ['l', true],
            ['z', false],
          ],
          1,
        ),
      ],
      preloaded: (n, m) => n === 'r' && m === 'l',
    }),
    stands: true,
  },
  {
    name: 'a back-off on the warm model ends: it is judged as if over, undone',
    load: { model: 'z', node: 'r', evict: 'w' },
    input: input({
      desired: DESIRED,
      nodes: [
        node('r', [
          ['p', true],
          ['w', true],
          ['z', false],
        ]),
      ],
      heldOff: () => true,
    }),
    stands: false,
    reclaim: 'w',
  },
  {
    name: "the load's own earlier hold is left out: it asks what happens without one",
    load: { model: 'z', node: 'r', evict: 'w' },
    input: input({
      desired: DESIRED,
      nodes: [
        node('r', [
          ['p', true],
          ['w', true],
          ['z', false],
        ]),
      ],
      held: heldOn('r', 'z'),
    }),
    stands: false,
    reclaim: 'w',
  },
];

for (const c of JUDGE_CASES) {
  test(`judgeOperatorLoad: ${c.name}`, () => {
    const judged = judgeOperatorLoad(c.load, c.input, HOLD_MS);
    assert.equal(judged.stands, c.stands, JSON.stringify(judged));
    if (!judged.stands) assert.equal(judged.reclaim.model, c.reclaim);
  });
}

test("planReconcile: an operator's unload holds the model off its node (warm and preload), not off the others", () => {
  const nodes = [
    node('r', [
      ['p', true],
      ['w', false],
    ]),
    node('s', [['w', false]]),
  ];
  assert.deepEqual(
    planReconcile(
      input({
        desired: DESIRED,
        nodes: [
          node('r', [
            ['p', true],
            ['w', false],
          ]),
        ],
        heldOut: heldOn('r', 'w'),
      }),
    ),
    [],
  );
  assert.deepEqual(planReconcile(input({ desired: DESIRED, nodes, heldOut: heldOn('r', 'w') })), [
    { model: 'w', node: 's', why: 'warm', evict: undefined },
  ]);
  assert.deepEqual(
    planReconcile(
      input({ desired: [{ model: 'l', desired: PRELOAD }], nodes: [node('r', [['l', false]])], heldOut: heldOn('r', 'l') }),
    ),
    [],
  );
});

const UNLOAD_CASES: { name: string; unload: { model: string; node: string }; input: ReconcileInput; stands: boolean }[] = [
  {
    name: 'the only node for a warm model: it would be loaded there again, undone',
    unload: { model: 'w', node: 'r' },
    input: input({
      desired: DESIRED,
      nodes: [
        node('r', [
          ['p', true],
          ['w', true],
        ]),
      ],
    }),
    stands: false,
  },
  {
    name: 'another node has room for the warm model: it goes there, the unload stands',
    unload: { model: 'w', node: 'r' },
    input: input({
      desired: DESIRED,
      nodes: [
        node('r', [
          ['p', true],
          ['w', true],
        ]),
        node('s', [['w', false]], 3),
      ],
    }),
    stands: true,
  },
  {
    name: 'a preloaded model is not preloaded again: stands',
    unload: { model: 'l', node: 'r' },
    input: input({ desired: [{ model: 'l', desired: PRELOAD }], nodes: [node('r', [['l', true]])], preloaded: () => true }),
    stands: true,
  },
  {
    name: 'a model nobody keeps: stands',
    unload: { model: 'x', node: 'r' },
    input: input({
      desired: DESIRED,
      nodes: [
        node('r', [
          ['p', true],
          ['x', true],
        ]),
        node('s', [['w', true]]),
      ],
    }),
    stands: true,
  },
];

for (const c of UNLOAD_CASES) {
  test(`judgeOperatorUnload: ${c.name}`, () => {
    const judged = judgeOperatorUnload(c.unload, c.input, HOLD_MS);
    assert.equal(judged.stands, c.stands, JSON.stringify(judged));
    if (!judged.stands)
      assert.match(
        judged.reason,
        /^unloading warm 'w' on node 'r' would not stand: the reconciler would load it there again .*"evict_warm": true to hold it off 'r' for 10m/,
      );
  });
}

test('judgeOperatorLoad: the reason names the warm model it costs, the pinned one in the other slot, and the override', () => {
  const judged = judgeOperatorLoad(
    { model: 'z', node: 'r', evict: 'w' },
    input({
      desired: DESIRED,
      nodes: [
        node('r', [
          ['p', true],
          ['w', true],
          ['z', false],
        ]),
      ],
    }),
    HOLD_MS,
  );
  assert.ok(!judged.stands);
  assert.match(judged.reason, /loading 'z' on node 'r', unloading warm 'w'/);
  assert.match(judged.reason, /to load warm 'w' there/);
  assert.match(judged.reason, /its slots hold pinned 'p', warm 'w'/);
  assert.match(judged.reason, /"evict_warm": true to hold 'z' there for 10m/);
});

test('OperatorHolds: a hold lasts until its end, a release or the opposite hold, and is listed until then', () => {
  const holds = new OperatorHolds(new MemoryHoldStore(() => 0));
  const hold = holds.hold('r', 'z', 'loaded', 1_000, 500);
  assert.deepEqual(hold, { node: 'r', model: 'z', kind: 'loaded', replica: null, sinceMs: 1_000, untilMs: 1_500 });
  assert.equal(holds.held('r', 'z', 1_499), 'loaded');
  assert.equal(holds.held('s', 'z', 1_000), undefined);
  assert.deepEqual(
    holds.list(1_200).map((h) => h.model),
    ['z'],
  );
  assert.equal(holds.held('r', 'z', 1_500), undefined, 'ended');
  assert.deepEqual(holds.list(1_500), []);
  holds.hold('r', 'z', 'loaded', 2_000, 500);
  holds.hold('r', 'z', 'unloaded', 2_100, 500);
  assert.equal(holds.held('r', 'z', 2_200), 'unloaded', "an unload replaces the load's hold");
  holds.release('r', 'z', 2_200, 500);
  assert.equal(holds.held('r', 'z', 2_201), undefined, 'released');
});

test('ModelReconciler: no round restores the warm model over a held load; the first round after the hold ends does', async () => {
  let monotonic = 0;
  const acts: { model: string; node: string | undefined; keepsZ: boolean }[] = [];
  let acted: () => void = () => undefined;
  const reconciler = new ModelReconciler({
    manager: {
      act: async (_action, model, node, _origin, options) => {
        acts.push({ model, node, keepsZ: options?.keep?.('z') === true });
        acted();
        return { outcome: 'done', action: 'load', model, node: node ?? '', detail: 'loaded' };
      },
      failure: () => undefined,
    },
    facts: afterOperatorLoad,
    desired: () => DESIRED,
    warmExcluded: () => false,
    queued: () => 0,
    pinned: (m) => m === 'p',
    onError: (error) => assert.fail(String(error)),
    now: () => 1_700_000_000_000 + monotonic,
    monotonicMs: () => monotonic,
    holdMs: () => HOLD_MS,
  });
  const round = async (): Promise<void> => {
    reconciler.poke();
    await new Promise((resolve) => setImmediate(resolve));
  };
  reconciler.hold('r', 'z', 'loaded');
  for (const at of [0, 1_000, HOLD_MS / 2, HOLD_MS - 1]) {
    monotonic = at;
    await round();
  }
  assert.deepEqual(acts, [], 'no load while the hold lasts');
  assert.deepEqual(reconciler.plan(), []);
  assert.deepEqual(
    reconciler.holds().map((h) => [h.node, h.model, h.untilMs]),
    [['r', 'z', HOLD_MS]],
  );
  monotonic = HOLD_MS;
  const done = new Promise<void>((resolve) => (acted = resolve));
  reconciler.poke();
  await done;
  assert.deepEqual(acts, [{ model: 'w', node: 'r', keepsZ: false }], 'the warm model restored once the hold ended');
  assert.deepEqual(reconciler.holds(), []);
  reconciler.stop();
});
