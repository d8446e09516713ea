// NodeRegistry: the only writer of node state. Reload carry-over (setNodes), retiring nodes with
// in-flight leases, and the frozen copies it hands to readers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '#src/core/clock.ts';
import { EventBus } from '#src/core/events.ts';
import type { DiscoveryResult } from '#src/discovery/index.ts';
import { NodeRegistry, type RegistryEvents } from '#src/nodes/index.ts';
import { LEARNED_CONTEXT_TTL_MS, NO_CAPACITY, withLearnedContexts } from '#src/capacity/index.ts';
import { model, spec } from '#test/fixtures/builders.ts';

interface Rig {
  readonly registry: NodeRegistry;
  readonly clock: ManualClock;
  readonly events: { name: string; node: string }[];
}

function rig(failThreshold = 3): Rig {
  const clock = new ManualClock();
  const bus = new EventBus<RegistryEvents>((error) => {
    throw error;
  });
  const events: Rig['events'] = [];
  bus.on('node:added', ({ node }) => events.push({ name: 'added', node }));
  bus.on('node:removed', ({ node }) => events.push({ name: 'removed', node }));
  return { registry: new NodeRegistry({ clock, events: bus, failThreshold }), clock, events };
}

const listed = (...ids: string[]): DiscoveryResult => ({ ok: true, models: ids.map((id) => model(id)) });
const EMPTY = listed();
const FAILED: DiscoveryResult = { ok: false, reason: 'error', error: 'GET /v1/models answered HTTP 500' };

function state(registry: NodeRegistry, name: string): { health: unknown; discovery: unknown } {
  const view = registry.view(name);
  assert.ok(view, `no view for ${name}`);
  return { health: view.health, discovery: view.discovery };
}

test('a node kept with the same name and URL keeps its health and discovery state (fails, empties, last error)', () => {
  const { registry, clock, events } = rig();
  registry.setNodes([spec('a', { url: 'http://127.0.0.1:9001' })]);
  registry.observeHealth('a', { ok: false, error: 'ECONNREFUSED' });
  registry.observeDiscovery('a', listed('m'));
  registry.observeDiscovery('a', FAILED);
  clock.advance(1_000);
  const before = state(registry, 'a');
  events.length = 0;

  // Group and api key change; name and URL do not.
  registry.setNodes([spec('a', { url: 'http://127.0.0.1:9001', group: 'g', apiKey: 'k2' })]);

  assert.deepEqual(state(registry, 'a'), before);
  const view = registry.view('a');
  assert.equal(view?.health.fails, 1);
  assert.equal(view?.health.lastError, 'ECONNREFUSED');
  assert.equal(view?.discovery.phase, 'degraded');
  assert.equal(view?.discovery.fails, 1);
  assert.equal(view?.discovery.lastError, FAILED.ok ? undefined : FAILED.error);
  assert.deepEqual(
    view?.discovery.models.map((m) => m.id),
    ['m'],
  );
  assert.equal(view?.spec.group, 'g', 'the spec itself is updated');
  assert.deepEqual(events, [], 'a kept node is neither removed nor added');
});

test('a kept node continues counting where it was: one empty listing before setNodes and one after make it known_empty', () => {
  const { registry } = rig();
  registry.setNodes([spec('a')]);
  registry.observeDiscovery('a', listed('m'));
  registry.observeDiscovery('a', EMPTY);
  assert.equal(registry.view('a')?.discovery.phase, 'known');
  registry.setNodes([spec('a'), spec('b')]);
  registry.observeDiscovery('a', EMPTY);
  assert.equal(registry.view('a')?.discovery.phase, 'known_empty');
});

test('a kept node continues counting failures across setNodes until its listing expires', () => {
  const { registry } = rig(3);
  registry.setNodes([spec('a')]);
  registry.observeDiscovery('a', listed('m'));
  registry.observeDiscovery('a', FAILED);
  registry.observeDiscovery('a', FAILED);
  registry.setNodes([spec('a')]);
  registry.observeDiscovery('a', FAILED);
  assert.equal(registry.view('a')?.discovery.phase, 'expired');
  assert.equal(registry.view('a')?.discovery.fails, 3);
});

test('a node whose URL changed starts fresh: untried, health unknown, reported removed then added', () => {
  const { registry, events } = rig();
  registry.setNodes([spec('a', { url: 'http://127.0.0.1:9001' })]);
  registry.observeHealth('a', { ok: false, error: 'ECONNREFUSED' });
  registry.observeDiscovery('a', listed('m'));
  registry.observeDiscovery('a', FAILED);
  events.length = 0;

  registry.setNodes([spec('a', { url: 'http://127.0.0.1:9002' })]);

  const view = registry.view('a');
  assert.equal(view?.spec.url, 'http://127.0.0.1:9002');
  assert.equal(view?.health.status, 'unknown');
  assert.equal(view?.health.fails, 0);
  assert.equal(view?.discovery.phase, 'untried');
  assert.equal(view?.discovery.fails, 0);
  assert.equal(view?.discovery.lastError, undefined);
  assert.deepEqual(view?.discovery.models, []);
  assert.deepEqual(events, [
    { name: 'added', node: 'a' },
    { name: 'removed', node: 'a' },
  ]);
});

test('a new node starts untried with unknown health while the others keep their state', () => {
  const { registry, events } = rig();
  registry.setNodes([spec('a')]);
  registry.observeDiscovery('a', listed('m'));
  events.length = 0;
  registry.setNodes([spec('a'), spec('b')]);
  assert.equal(registry.view('a')?.discovery.phase, 'known');
  assert.equal(registry.view('b')?.discovery.phase, 'untried');
  assert.equal(registry.view('b')?.health.status, 'unknown');
  assert.deepEqual(events, [{ name: 'added', node: 'b' }]);
});

test('a removed node leaves the routing snapshot at once, but its in-flight leases stay counted until released', () => {
  const { registry, events } = rig();
  registry.setNodes([spec('a'), spec('b')]);
  const first = registry.claim('a', 'm', 10);
  const second = registry.claim('a', 'm', 10);
  assert.ok(first && second);
  assert.equal(registry.inFlight('a'), 2);

  registry.setNodes([spec('b')]);

  assert.deepEqual(
    registry.snapshot().nodes.map((v) => v.spec.name),
    ['b'],
    'never routed to again',
  );
  assert.equal(registry.view('a'), undefined);
  assert.equal(registry.claim('a', 'm', 10), undefined, 'no new lease on a removed node');
  assert.equal(registry.retiringInFlight(), 2);
  assert.ok(events.some((e) => e.name === 'removed' && e.node === 'a'));

  first.release();
  first.release(); // a second release is ignored
  assert.equal(registry.retiringInFlight(), 1);
  second.release();
  assert.equal(registry.retiringInFlight(), 0);
});

test('a lease claims the in-flight count and the slot and budget usage together, and one release returns both', () => {
  const clock = new ManualClock();
  const returned: unknown[] = [];
  const registry = new NodeRegistry({
    clock,
    events: new EventBus<RegistryEvents>(),
    failThreshold: 3,
    connectionLimit: 2,
    onLeaseReturned: (r) => returned.push(r),
  });
  registry.setNodes([spec('a')]);
  const first = registry.claim('a', 'm', 100);
  const second = registry.claim('a', 'n', 50);
  assert.ok(first && second);
  assert.deepEqual([first.node, first.model, first.tokens], ['a', 'm', 100]);
  const snapshot = (): { inFlight: number; m: unknown; n: unknown } => {
    const s = registry.snapshot();
    return { inFlight: s.inFlight('a'), m: s.usage('a', 'm'), n: s.usage('a', 'n') };
  };
  assert.deepEqual(snapshot(), { inFlight: 2, m: { requests: 1, tokens: 100 }, n: { requests: 1, tokens: 50 } });
  assert.equal(registry.leaseCount(), 2);

  first.release();
  first.release(); // a second release is ignored
  assert.deepEqual(snapshot(), { inFlight: 1, m: { requests: 0, tokens: 0 }, n: { requests: 1, tokens: 50 } });
  second.release();
  assert.deepEqual(registry.leaseEntries(), []);
  assert.deepEqual(
    returned,
    [
      { node: 'a', model: 'm', connectionFreed: true },
      { node: 'a', model: 'n', connectionFreed: false },
    ],
    'only the release that left the node below its connection limit frees a connection',
  );
});

test('a removed node without in-flight requests is not counted as retiring, and its late observations are ignored', () => {
  const { registry } = rig();
  const seen: string[] = [];
  registry.setNodes([spec('a'), spec('b')]);
  registry.setNodes([spec('b')]);
  assert.equal(registry.retiringInFlight(), 0);
  registry.observeDiscovery('a', listed('m'));
  registry.observeHealth('a', { ok: true, latencyMs: 1 });
  for (const v of registry.views()) seen.push(v.spec.name);
  assert.deepEqual(seen, ['b']);
});

test('views are frozen: a reader cannot change node state through a view, however deep it reaches', () => {
  const { registry } = rig();
  registry.setNodes([spec('a')]);
  registry.observeHealth('a', { ok: true, latencyMs: 1 });
  registry.observeDiscovery('a', { ok: true, models: [model('m', { aliases: ['mm'] })] });
  const views = registry.views();
  const view = views[0];
  assert.ok(view);

  const attempts: (() => void)[] = [
    () => Reflect.set(view, 'health', { ...view.health, status: 'dead' }) || fail('view'),
    () => Reflect.set(view.spec, 'url', 'http://evil') || fail('spec'),
    () => Reflect.set(view.health, 'fails', 99) || fail('health'),
    () => Reflect.set(view.discovery, 'phase', 'expired') || fail('discovery'),
    () => Reflect.set(view.discovery.models, 0, model('other')) || fail('models'),
    () => Reflect.set(view.discovery.models[0] ?? {}, 'id', 'other') || fail('model'),
    () => Reflect.set(view.discovery.models[0]?.aliases ?? [], 0, 'x') || fail('aliases'),
    () => Reflect.set(views, 0, undefined) || fail('list'),
  ];
  for (const attempt of attempts) assert.throws(attempt, /frozen: /);

  const fresh = registry.view('a');
  assert.equal(fresh?.spec.url, spec('a').url);
  assert.equal(fresh?.health.status, 'healthy');
  assert.equal(fresh?.health.fails, 0);
  assert.equal(fresh?.discovery.phase, 'known');
  assert.deepEqual(
    fresh?.discovery.models.map((m) => [m.id, [...m.aliases]]),
    [['m', ['mm']]],
  );
});

test('a view is a copy in time: later observations do not change a view already handed out', () => {
  const { registry } = rig();
  registry.setNodes([spec('a')]);
  registry.observeDiscovery('a', listed('m'));
  const before = registry.view('a');
  registry.observeDiscovery('a', FAILED);
  registry.observeHealth('a', { ok: false, error: 'boom' });
  assert.equal(before?.discovery.phase, 'known');
  assert.equal(before?.discovery.fails, 0);
  assert.equal(before?.health.status, 'unknown');
  assert.equal(registry.view('a')?.discovery.phase, 'degraded');
});

test("a result handed to the registry stays the caller's: changing it later does not change the stored listing", () => {
  const { registry } = rig();
  registry.setNodes([spec('a')]);
  const models = [model('m')];
  registry.observeDiscovery('a', { ok: true, models });
  models.push(model('sneaked-in'));
  assert.deepEqual(
    registry.view('a')?.discovery.models.map((m) => m.id),
    ['m'],
  );
  assert.ok(!Object.isFrozen(models), "the caller's array is not frozen behind its back");
});

test('a lower fail threshold set on reload applies to the next listing failure', () => {
  const { registry } = rig(5);
  registry.setNodes([spec('a')]);
  registry.observeDiscovery('a', listed('m'));
  registry.observeDiscovery('a', FAILED);
  assert.equal(registry.view('a')?.discovery.phase, 'degraded');
  registry.setFailThreshold(2);
  registry.observeDiscovery('a', FAILED);
  assert.equal(registry.view('a')?.discovery.phase, 'expired');
});

/** Reflect.set returns false on a frozen target instead of throwing; turn that into a throw. */
function fail(what: string): never {
  throw new TypeError(`frozen: ${what} could not be changed`);
}

test('a context a node stated in a refusal outlives polls without a figure, until a poll gives one or it grows old', () => {
  const learned = { m: { nCtx: 512, atMs: 1_000 } };
  const kept = withLearnedContexts(NO_CAPACITY, learned, 2_000);
  assert.deepEqual(kept.capacity.models, { m: { nCtx: 512, slots: undefined } });
  const polled = withLearnedContexts({ ...NO_CAPACITY, models: { m: { nCtx: 4096, slots: 2 } } }, learned, 2_000);
  assert.deepEqual(polled.capacity.models, { m: { nCtx: 4096, slots: 2 } });
  assert.deepEqual(polled.learned, {});
  const old = withLearnedContexts(NO_CAPACITY, learned, 1_000 + LEARNED_CONTEXT_TTL_MS);
  assert.deepEqual(old.capacity.models, {});
});

test('a reload that narrows a node allow-list stops its other listed ids at once; the rest of its state stays', () => {
  const { registry } = rig();
  registry.setNodes([spec('n')]);
  registry.observeDiscovery('n', listed('llama-1', 'x'));
  registry.setNodes([{ ...spec('n'), allowedModels: ['llama-*'] }]);
  const view = registry.view('n');
  assert.deepEqual(
    view?.discovery.models.map((m) => m.id),
    ['llama-1'],
  );
  assert.deepEqual([...(view?.modelsById.keys() ?? [])], ['llama-1']);
  assert.equal(view?.discovery.phase, 'known');
});
