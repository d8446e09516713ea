// A registry view's facts (NodeView.facts) are exactly what the rules they stand for answer for that
// view, for every kind, role and listing, and stay so as the capacity and the listing change: the
// request path reads them instead of asking the rules (issue 39's footprint).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '#src/core/clock.ts';
import { EventBus } from '#src/core/events.ts';
import { NODE_KINDS, nodePathPrefix } from '#src/config/index.ts';
import { ctxFor, NO_CAPACITY, residencyOf, type NodeCapacity } from '#src/capacity/index.ts';
import { streamUsageFor, truncatesSilently } from '#src/kinds/index.ts';
import { NodeRegistry, SwitchTickets, type NodeView, type RegistryEvents } from '#src/nodes/index.ts';
import { model, spec } from '#test/fixtures/builders.ts';

function registry(): NodeRegistry {
  const events = new EventBus<RegistryEvents>((error) => {
    throw error;
  });
  return new NodeRegistry({ clock: new ManualClock(), events, failThreshold: 3 });
}

function assertFacts(view: NodeView, asked: readonly string[]): void {
  const facts = view.facts;
  assert.ok(facts, `${view.spec.name}: a registry view has its facts`);
  assert.equal(facts.truncates, truncatesSilently(view.spec.kind, view.capacity.role));
  assert.deepEqual(facts.streamUsage, streamUsageFor(view.spec.kind, view.capacity.role));
  assert.equal(facts.pathPrefix, nodePathPrefix(view.spec.url));
  assert.deepEqual([...facts.models.keys()], [...view.modelsById.keys()], 'one entry per listed model');
  for (const id of asked) {
    const listed = facts.models.get(id);
    if (!view.modelsById.has(id)) {
      assert.equal(listed, undefined, `${id} is not listed: readers ask the rules`);
      continue;
    }
    assert.deepEqual(listed?.residency, residencyOf(view, id), `${view.spec.name} ${id} residency`);
    assert.equal(listed?.ctx, ctxFor(view, id), `${view.spec.name} ${id} context`);
  }
}

const CAPACITIES: readonly NodeCapacity[] = [
  NO_CAPACITY,
  { ...NO_CAPACITY, role: 'single', host: { nCtx: 8192, slots: 4 } },
  { ...NO_CAPACITY, role: 'router', models: { a: { nCtx: 4096, slots: 2 } } },
  { ...NO_CAPACITY, models: { b: { nCtx: 2048, slots: undefined } }, loadedIds: ['b'] },
];

test('view facts equal the rules for every kind, role and listing, as the capacity and the listing change', () => {
  for (const kind of NODE_KINDS) {
    const reg = registry();
    const name = `n-${kind}`;
    const url = `http://127.0.0.1:1/prefix/${kind}`;
    reg.setNodes([spec(name, { kind, url })]);
    const asked = ['a', 'b', 'c'];
    assertFacts(reg.view(name) as NodeView, asked);
    const listings = [
      [model('a'), model('b', { loaded: false, status: 'unloaded', contextTokens: 1024 })],
      [model('a', { contextTokens: 16384 }), model('c', { loaded: false, status: 'sleeping' })],
    ];
    for (const models of listings) {
      reg.observeDiscovery(name, { ok: true, models });
      assertFacts(reg.view(name) as NodeView, asked);
      for (const capacity of CAPACITIES) {
        reg.observeCapacity(name, url, capacity);
        assertFacts(reg.view(name) as NodeView, asked);
        for (const view of reg.snapshot().nodes) assertFacts(view, asked);
      }
    }
  }
});

test('a view with its facts crosses to a worker as it is (plain data)', () => {
  const reg = registry();
  reg.setNodes([spec('n', { url: 'http://127.0.0.1:1/v' })]);
  reg.observeDiscovery('n', { ok: true, models: [model('a')] });
  const view = reg.view('n') as NodeView;
  assert.deepEqual(structuredClone(view.facts), view.facts);
});

test('the switch book is quiet exactly while it holds no ticket and shares none', () => {
  const book = new SwitchTickets();
  assert.equal(book.quiet, true);
  assert.equal(book.take('n', { model: 'a', action: 'load', by: 'request', loaded: false, victim: undefined }).ok, true);
  assert.equal(book.quiet, false);
  book.markLoaded('n', 'a');
  assert.equal(book.quiet, false);
  book.release('n', 'a');
  assert.equal(book.quiet, true);
  book.share({
    remote: () => undefined,
    remoteHeld: () => [],
    claim: () => Promise.resolve(undefined),
    update: () => undefined,
    release: () => undefined,
    busyElsewhere: () => new Set(),
    caughtUp: () => undefined,
  });
  assert.equal(book.quiet, false, 'another replica may hold a ticket: ask per node');
});

test('a listing’s models with the same residency and context share one facts object (issue 42: memory per node)', () => {
  const reg = registry();
  reg.setNodes([spec('n', { url: 'http://127.0.0.1:1', kind: 'vllm' }), spec('m', { url: 'http://127.0.0.1:2', kind: 'vllm' })]);
  const fifty = Array.from({ length: 50 }, (_, i) => model(`m${i}`, { contextTokens: i < 25 ? 8192 : 4096 }));
  reg.observeDiscovery('n', { ok: true, models: [...fifty, model('x', { loaded: false, status: 'sleeping' })] });
  reg.observeDiscovery('m', { ok: true, models: fifty });
  const [n, m] = [reg.view('n'), reg.view('m')];
  assertFacts(n as NodeView, ['m0', 'm49', 'x']);
  const distinct = (view: NodeView | undefined): number => new Set(view?.facts?.models.values()).size;
  assert.equal(distinct(n), 3, 'one object per distinct (residency, context): loaded 8192, loaded 4096, sleeping');
  assert.equal(n?.facts?.models.get('m0'), n?.facts?.models.get('m24'));
  assert.equal(
    n?.facts?.models.get('m0')?.residency,
    m?.facts?.models.get('m0')?.residency,
    'a residency is shared across nodes',
  );
});
