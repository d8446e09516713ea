// The router-room rule as a table: which requests a llama-server router at max_instances takes now,
// and why the others wait (or skip it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chooseVictim, classifyUnroutable, routerRoom, routerRoomVerdict, type RouterSwitchView } from '#src/routing/index.ts';
import { node, snapshotOf, type NodeOptions } from '#test/fixtures/builders.ts';

const NO_SWITCH: RouterSwitchView = { pending: undefined, switchDue: false, failedLoads: new Map() };

function router(max: number | undefined, options: NodeOptions = {}): ReturnType<typeof node> {
  return node('r', {
    kind: 'llamacpp',
    models: ['a'],
    onDemand: { b: 'unloaded', c: 'unloaded' },
    capacity: { role: 'router', router: { maxInstances: max, autoload: true } },
    ...options,
  });
}

interface Row {
  readonly name: string;
  readonly model: string;
  readonly max?: number | undefined;
  readonly options?: NodeOptions;
  readonly busy?: readonly string[];
  readonly view?: Partial<RouterSwitchView>;
  readonly code: string | undefined;
}

const ROWS: readonly Row[] = [
  { name: 'the loaded model goes', model: 'a', code: undefined },
  { name: 'an unloaded model switches an idle loaded one', model: 'b', code: undefined },
  { name: 'an unloaded model waits while every loaded model is busy', model: 'b', busy: ['a'], code: 'models_full' },
  {
    name: 'with room below max_instances an unloaded model loads without a switch',
    model: 'b',
    max: 2,
    busy: ['a'],
    code: undefined,
  },
  { name: 'max_instances 0 (unlimited) is not limited', model: 'b', max: 0, busy: ['a'], code: undefined },
  { name: 'a router that did not report max_instances is not limited', model: 'b', max: undefined, busy: ['a'], code: undefined },
  {
    name: 'a model still loading is no victim',
    model: 'c',
    max: 2,
    options: { models: ['a'], onDemand: { b: 'loading', c: 'unloaded' } },
    busy: ['a'],
    code: 'models_full',
  },
  {
    name: 'a sleeping idle model is a victim',
    model: 'b',
    options: { models: [], onDemand: { a: 'sleeping', b: 'unloaded' } },
    code: undefined,
  },
  {
    name: 'followers wait while their model loads',
    model: 'b',
    view: { pending: { model: 'b', loaded: false } },
    code: 'switching',
  },
  {
    name: 'followers go once their model loaded (listing not caught up)',
    model: 'b',
    view: { pending: { model: 'b', loaded: true } },
    code: undefined,
  },
  {
    name: 'one switch at a time: another unloaded model waits',
    model: 'c',
    view: { pending: { model: 'b', loaded: false } },
    code: 'switching',
  },
  {
    name: 'during a switch an idle loaded model may be the victim: it waits',
    model: 'a',
    view: { pending: { model: 'b', loaded: false } },
    code: 'switching',
  },
  {
    name: 'during a switch a busy loaded model keeps serving',
    model: 'a',
    max: 2,
    busy: ['a'],
    view: { pending: { model: 'b', loaded: false } },
    code: undefined,
  },
  {
    name: 'a switch waiting past swap_after holds the loaded model',
    model: 'a',
    busy: ['a'],
    view: { switchDue: true },
    code: 'switch_due',
  },
  {
    name: 'a model that failed to load is skipped',
    model: 'b',
    view: { failedLoads: new Map([['b', 'did not load']]) },
    code: 'load_failed',
  },
  {
    name: 'a pinned idle model is never the victim: the router is excluded with `pinned`',
    model: 'b',
    view: { pinned: new Set(['a']) },
    code: 'pinned',
  },
  {
    name: 'a pinned model mid-request: still `pinned` (it never goes, idle or not)',
    model: 'b',
    busy: ['a'],
    view: { pinned: new Set(['a']) },
    code: 'pinned',
  },
  {
    name: 'a pinned idle model and a busy unpinned one: waits for the unpinned one',
    model: 'c',
    max: 2,
    options: { models: ['a', 'b'], onDemand: { c: 'unloaded' } },
    busy: ['b'],
    view: { pinned: new Set(['a']) },
    code: 'models_full',
  },
  {
    name: 'a pinned model beside an idle unpinned one: that one is the victim',
    model: 'c',
    max: 2,
    options: { models: ['a', 'b'], onDemand: { c: 'unloaded' } },
    view: { pinned: new Set(['a']) },
    code: undefined,
  },
  { name: 'the pinned model itself goes', model: 'a', view: { pinned: new Set(['a']) }, code: undefined },
  {
    name: "during a switch the gateway's named victim waits",
    model: 'a',
    view: { pending: { model: 'b', loaded: false, victim: 'a' } },
    code: 'switching',
  },
  {
    name: 'during a switch with its victim named another idle loaded model keeps serving',
    model: 'a',
    max: 2,
    options: { models: ['a', 'x'], onDemand: { b: 'unloaded' } },
    view: { pending: { model: 'b', loaded: false, victim: 'x' } },
    code: undefined,
  },
  {
    name: 'during an unload the model unloaded waits',
    model: 'a',
    view: { pending: { model: 'a', loaded: false, action: 'unload' } },
    code: 'switching',
  },
  {
    name: 'during an unload another unloaded model waits (one at a time)',
    model: 'b',
    view: { pending: { model: 'a', loaded: false, action: 'unload' } },
    code: 'switching',
  },
  {
    name: 'a failed model listed as loaded since goes',
    model: 'a',
    view: { failedLoads: new Map([['a', 'did not load']]) },
    code: undefined,
  },
  {
    name: '[cluster] a model another replica uses is no victim: waits for it to go idle there',
    model: 'b',
    view: { busyElsewhere: new Set(['a']) },
    code: 'models_full',
  },
  {
    name: '[cluster] with another idle model beside the one used elsewhere: that one is the victim',
    model: 'c',
    max: 2,
    options: { models: ['a', 'b'], onDemand: { c: 'unloaded' } },
    view: { busyElsewhere: new Set(['a']) },
    code: undefined,
  },
  {
    name: "[cluster] another replica's switch on a one-model router: a model the listing still shows loaded waits",
    model: 'a',
    view: { pending: { model: 'b', loaded: true, victim: 'x', replica: 'r1' } },
    code: 'switching',
  },
  {
    name: "[cluster] another replica's switch on a one-model router: its model's followers go once loaded",
    model: 'b',
    view: { pending: { model: 'b', loaded: true, victim: 'a', replica: 'r1' } },
    code: undefined,
  },
  {
    name: "[cluster] another replica's released switch (listing catching up): its victim still waits",
    model: 'a',
    max: 2,
    options: { models: ['a', 'x'], onDemand: { b: 'unloaded' } },
    view: { pending: { model: 'b', loaded: true, victim: 'a', replica: 'r1', settled: true } },
    code: 'switching',
  },
  {
    name: "[cluster] another replica's switch on a two-model router: a loaded model not its victim keeps serving",
    model: 'x',
    max: 2,
    options: { models: ['a', 'x'], onDemand: { b: 'unloaded' } },
    view: { pending: { model: 'b', loaded: false, victim: 'a', replica: 'r1' } },
    code: undefined,
  },
  {
    name: 'a router that queues itself takes an unloaded model while every loaded model is busy (its queue holds it)',
    model: 'b',
    busy: ['a'],
    view: { routerQueues: true },
    code: undefined,
  },
  {
    name: 'a router that queues itself: the loaded model goes while no load held there is overdue',
    model: 'a',
    busy: ['a'],
    view: { routerQueues: true },
    code: undefined,
  },
  {
    name: 'a router that queues itself: a load held there past swap_after holds the loaded model (the bound it lacks)',
    model: 'a',
    view: { routerQueues: true, switchDue: true },
    code: 'switch_due',
  },
  {
    name: 'a router that queues itself: an admin switch under way still goes first',
    model: 'c',
    view: { routerQueues: true, pending: { model: 'b', loaded: false, by: 'admin' } as RouterSwitchView['pending'] },
    code: 'switching',
  },
  {
    name: 'a router that queues itself: a model that failed to load is still held off',
    model: 'b',
    view: { routerQueues: true, failedLoads: new Map([['b', 'did not load']]) },
    code: 'load_failed',
  },
];

for (const row of ROWS) {
  test(`router room: ${row.name}`, () => {
    const view = router('max' in row ? row.max : 1, row.options);
    const usage = Object.fromEntries((row.busy ?? []).map((m) => [`r/${m}`, { requests: 1, tokens: 10 }]));
    const verdict = routerRoomVerdict(row.model, view, snapshotOf([view], {}, usage), { ...NO_SWITCH, ...row.view });
    assert.equal(verdict?.code, row.code, JSON.stringify(verdict));
  });
}

test('a single server (or an unknown role) is never held by the router rule', () => {
  const single = node('s', {
    kind: 'llamacpp',
    models: ['a'],
    capacity: { role: 'single', router: { maxInstances: 1, autoload: true } },
  });
  assert.equal(
    routerRoomVerdict('a', single, snapshotOf([single], {}, { 's/a': { requests: 3, tokens: 1 } }), NO_SWITCH),
    undefined,
  );
});

test('waiting for a switch is busy (queue), a failed load is unavailable (503)', () => {
  for (const code of ['models_full', 'switching', 'switch_due'] as const) {
    assert.equal(classifyUnroutable([{ node: 'r', filter: 'router-room', code }]), 'busy', code);
  }
  assert.equal(classifyUnroutable([{ node: 'r', filter: 'router-room', code: 'load_failed' }]), 'unavailable');
});

test('the filter drops no node without an exclusion and keeps the candidates in order', () => {
  const nodes = [
    router(1, { models: ['a'], onDemand: { b: 'unloaded' } }),
    node('plain', { models: ['b'] }),
    node('r2', {
      kind: 'llamacpp',
      models: [],
      onDemand: { b: 'unloaded' },
      capacity: { role: 'router', router: { maxInstances: 2, autoload: true } },
    }),
  ];
  const snapshot = snapshotOf(nodes, {}, { 'r/a': { requests: 1, tokens: 1 } });
  const result = routerRoom(() => NO_SWITCH).apply(
    {
      model: 'b',
      group: undefined,
      triedNodes: new Set(),
      promptTokens: undefined,
      maxTokens: undefined,
      completionReserveTokens: 0,
      loadOnDemand: true,
      policy: 'least-in-flight',
    },
    nodes,
    snapshot,
  );
  assert.deepEqual(
    result.kept.map((n) => n.spec.name),
    ['plain', 'r2'],
  );
  assert.deepEqual(
    result.excluded.map((e) => [e.node, e.filter, e.code]),
    [['r', 'router-room', 'models_full']],
  );
});

test('the victim: never pinned, never busy or loading; an unwanted one before a warm one, one with nothing queued first', () => {
  const full = node('r', {
    kind: 'llamacpp',
    models: ['p', 'w', 'q', 'z'],
    onDemand: { n: 'unloaded' },
    capacity: { role: 'router', router: { maxInstances: 4, autoload: true } },
  });
  const snapshot = snapshotOf([full], {}, {});
  const queued = (m: string): number => (m === 'q' ? 2 : 0);
  const view = { pinned: new Set(['p']), wanted: new Set(['w']) };
  assert.deepEqual(chooseVictim('n', full, snapshot, view, queued), { kind: 'victim', model: 'z' });
  const busyZ = snapshotOf([full], {}, { 'r/z': { requests: 1, tokens: 1 } });
  assert.deepEqual(
    chooseVictim('n', full, busyZ, view, queued),
    { kind: 'victim', model: 'q' },
    'one with requests queued before a wanted one',
  );
  const onlyWanted = snapshotOf([full], {}, { 'r/z': { requests: 1, tokens: 1 }, 'r/q': { requests: 1, tokens: 1 } });
  assert.deepEqual(
    chooseVictim('n', full, onlyWanted, view, queued),
    { kind: 'victim', model: 'w' },
    'a warm model goes last, but it goes (the reconciler brings it back)',
  );
  const allBusy = snapshotOf(
    [full],
    {},
    { 'r/z': { requests: 1, tokens: 1 }, 'r/q': { requests: 1, tokens: 1 }, 'r/w': { requests: 1, tokens: 1 } },
  );
  assert.equal(chooseVictim('n', full, allBusy, view, queued).kind, 'busy');
  assert.deepEqual(chooseVictim('n', full, snapshot, { pinned: new Set(['p', 'w', 'q', 'z']) }), {
    kind: 'pinned',
    running: 4,
    max: 4,
    pinned: ['p', 'w', 'q', 'z'],
  });
});

test("[cluster] a wait for another replica's switch names that replica", () => {
  const view = router(1);
  const verdict = routerRoomVerdict('c', view, snapshotOf([view], {}, {}), {
    ...NO_SWITCH,
    pending: { model: 'b', loaded: false, victim: 'a', replica: 'r2' },
  });
  assert.match(verdict?.detail ?? '', /switching to b; one switch at a time \(replica r2's switch\)/);
  const settled = routerRoomVerdict('a', view, snapshotOf([view], {}, {}), {
    ...NO_SWITCH,
    pending: { model: 'b', loaded: true, victim: 'a', replica: 'r2', settled: true },
  });
  assert.match(
    settled?.detail ?? '',
    /a is unloaded to make room for b \(replica r2's switch, this replica's listing catching up\)/,
  );
});
