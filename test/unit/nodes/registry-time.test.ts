// The registry's views are data: they carry absolute deadlines (an ejection's end, a wake's window)
// and readers compare them with their own `now`. Time passing rebuilds nothing and needs no timer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '#src/core/clock.ts';
import { EventBus } from '#src/core/events.ts';
import { isEjected, isWaking, NodeRegistry, type RegistryEvents } from '#src/nodes/index.ts';
import { defaultFilters, leastInFlight, route } from '#src/routing/index.ts';
import { NO_CAPACITY } from '#src/capacity/index.ts';
import { model, request, spec } from '#test/fixtures/builders.ts';

const EJECTION = { ejectAfterFailures: 2, ejectForMs: 30_000 };

function rig(): { registry: NodeRegistry; clock: ManualClock; events: string[] } {
  const clock = new ManualClock();
  const bus = new EventBus<RegistryEvents>((error) => {
    throw error;
  });
  const events: string[] = [];
  bus.on('node:ejected', ({ node }) => events.push(`ejected ${node}`));
  bus.on('node:readmitted', ({ node }) => events.push(`readmitted ${node}`));
  bus.on('node:capacity', ({ node }) => events.push(`capacity ${node}`));
  return { registry: new NodeRegistry({ clock, events: bus, failThreshold: 3 }), clock, events };
}

function ejectedNow(registry: NodeRegistry, name: string): boolean {
  const snapshot = registry.snapshot();
  const view = snapshot.nodes.find((n) => n.spec.name === name);
  assert.ok(view, `no view for ${name}`);
  return isEjected(view, snapshot.now);
}

test('an ejected node stands by until its deadline, judged by the snapshot time, with the same views throughout', () => {
  const { registry, clock, events } = rig();
  registry.setNodes([spec('flaky'), spec('steady')]);
  for (const name of ['flaky', 'steady']) {
    registry.observeHealth(name, { ok: true, latencyMs: 1 });
    registry.observeDiscovery(name, { ok: true, models: [model('m')] });
  }
  for (let i = 0; i < 2; i++) registry.observeUpstream('flaky', 'failure', EJECTION);
  const ejectedAt = clock.now();
  assert.equal(registry.view('flaky')?.ejectedUntil, ejectedAt + 30_000);
  const views = registry.views();
  /** The selected node, then every exclusion as node:code. */
  const pick = (): readonly string[] => {
    const decision = route(request('m'), registry.snapshot(), defaultFilters(), leastInFlight());
    return decision.kind === 'selected' ? [decision.node.spec.name, ...decision.excluded.map((e) => `${e.node}:${e.code}`)] : [];
  };
  assert.deepEqual(pick(), ['steady', 'flaky:ejected']);

  clock.advance(29_999);
  assert.equal(ejectedNow(registry, 'flaky'), true);
  clock.advance(1);
  assert.equal(registry.views(), views, 'time passing rebuilds no view');
  assert.equal(ejectedNow(registry, 'flaky'), false);
  assert.deepEqual(events, ['ejected flaky', 'readmitted flaky'], 'the readmission is still announced');
  assert.deepEqual(pick().slice(1), [], 'readmitted: routed to like any other node');
});

test('an ejection extended while it lasts moves the deadline in the view', () => {
  const { registry, clock } = rig();
  registry.setNodes([spec('a')]);
  for (let i = 0; i < 2; i++) registry.observeUpstream('a', 'failure', EJECTION);
  clock.advance(10_000);
  for (let i = 0; i < 2; i++) registry.observeUpstream('a', 'failure', EJECTION);
  assert.equal(registry.view('a')?.ejectedUntil, clock.now() + 30_000);
});

test('a wake is under way until its window ends, and no timer is armed to say so', () => {
  const { registry, clock } = rig();
  const sleeper = spec('sleeper', { wake: { kind: 'command', argv: ['true'] }, wakeTimeoutMs: 60_000 });
  registry.setNodes([sleeper]);
  for (let i = 0; i < 3; i++) registry.observeHealth('sleeper', { ok: false, error: 'ECONNREFUSED' });
  assert.equal(registry.view('sleeper')?.health.status, 'asleep');
  const timersBefore = clock.pendingTimers();
  registry.markWakeSent('sleeper');
  const view = registry.view('sleeper');
  assert.ok(view);
  assert.deepEqual(view.wake, { lastSentAt: clock.now(), wakingUntil: clock.now() + 60_000 });
  assert.equal(clock.pendingTimers(), timersBefore);
  assert.equal(isWaking(view, clock.now() + 59_999), true);
  assert.equal(isWaking(view, clock.now() + 60_000), false);
});

test('a node that answers again is no longer waking, whatever its wake window says', () => {
  const { registry } = rig();
  registry.setNodes([spec('sleeper', { wake: { kind: 'command', argv: ['true'] } })]);
  for (let i = 0; i < 3; i++) registry.observeHealth('sleeper', { ok: false, error: 'ECONNREFUSED' });
  registry.markWakeSent('sleeper');
  registry.observeHealth('sleeper', { ok: true, latencyMs: 1 });
  const view = registry.view('sleeper');
  assert.equal(view?.wake.wakingUntil, undefined);
  assert.notEqual(view?.wake.lastSentAt, undefined);
});

test('a capacity poll repeating the same figures, in any model order, keeps the view and announces nothing', () => {
  const { registry, events } = rig();
  registry.setNodes([spec('a')]);
  const url = spec('a').url;
  const a = { nCtx: 4096, slots: 2 };
  const b = { nCtx: 8192, slots: undefined };
  registry.observeCapacity('a', url, { ...NO_CAPACITY, role: 'single', models: { a, b } });
  const view = registry.view('a');
  registry.observeCapacity('a', url, { ...NO_CAPACITY, role: 'single', models: { b: { ...b }, a: { ...a } } });
  assert.equal(registry.view('a'), view);
  assert.deepEqual(events, ['capacity a']);
  registry.observeCapacity('a', url, { ...NO_CAPACITY, role: 'single', models: { a: { nCtx: 2048, slots: 2 }, b } });
  assert.notEqual(registry.view('a'), view);
  assert.deepEqual(events, ['capacity a', 'capacity a']);
});
