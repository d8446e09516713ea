// Router model switches as scheduler policy, driven by events against the recording fake fleet and a
// ManualClock: a request for a model a full router does not run waits in the gateway's queue until a
// loaded model is idle, one switch per router runs at a time, its followers go once it has loaded,
// swap_after stops a hot model from starving the others, and a load that times out is held off.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { NodeView } from '#src/nodes/index.ts';
import { node } from '#test/fixtures/builders.ts';
import { ask, describe, rig, settle, SETTINGS, type Rig } from './fake-fleet.ts';

/** A router with max_instances 1: `loaded` is running, the others are listed unloaded. */
function router(loaded: string, others: readonly string[]): NodeView {
  return node('r', {
    kind: 'llamacpp',
    models: [loaded],
    onDemand: Object.fromEntries(others.map((m) => [m, 'unloaded'])),
    capacity: { role: 'router', router: { maxInstances: 1, autoload: true } },
  });
}

function admitted(r: Rig, index: number): void {
  r.leases[index]?.release();
}

test('a request for another model waits until the loaded one is idle, then switches once, and its followers go when loaded', async () => {
  const r = rig([router('a', ['b'])]);
  const a1 = await ask(r, 'a').promise;
  assert.equal(a1.kind === 'admitted' && a1.load, undefined, 'no load for a loaded model');
  const b1 = ask(r, 'b');
  const b2 = ask(r, 'b');
  await settle();
  assert.deepEqual([describe(b1.outcome()), describe(b2.outcome())], ['waiting', 'waiting']);
  assert.deepEqual(
    r.notices.filter((n) => n.kind === 'switch'),
    [],
  );

  r.clock.advance(40);
  admitted(r, 0);
  await settle();
  const switched = b1.outcome();
  assert.equal(describe(switched), 'admitted r after 40ms');
  assert.equal(describe(b2.outcome()), 'waiting', 'the follower waits for the load');
  assert.deepEqual(
    r.notices.filter((n) => n.kind === 'switch'),
    [{ kind: 'switch', node: 'r', model: 'b' }],
  );
  assert.ok(switched?.kind === 'admitted' && switched.load !== undefined);
  assert.equal(switched.load.timeoutMs, SETTINGS.loadTimeoutMs);

  const a2 = ask(r, 'a');
  switched.load.settle('loaded');
  await settle();
  assert.equal(describe(b2.outcome()), 'admitted r after 40ms', 'the follower went once the model loaded');
  assert.ok(r.calls.includes('refresh r'), 'the listing is asked to catch up');
  assert.equal(describe(a2.outcome()), 'waiting', 'the evicted model needs the next switch');
});

test('one switch per router at a time: a third model waits behind the switch in flight', async () => {
  const r = rig([router('a', ['b', 'c'])]);
  const b = await ask(r, 'b').promise;
  assert.ok(b.kind === 'admitted' && b.load !== undefined);
  const c = ask(r, 'c');
  await settle();
  assert.equal(describe(c.outcome()), 'waiting');
  b.load.settle('loaded');
  admitted(r, 0);
  await settle();
  assert.equal(describe(c.outcome()), 'waiting', 'b is loaded now; c needs b idle and the listing caught up');
  r.setNodes([router('b', ['a', 'c'])]);
  r.scheduler.fleetChanged();
  await settle();
  assert.equal(describe(c.outcome()), 'admitted r after 0ms');
  assert.equal(r.notices.filter((n) => n.kind === 'switch').length, 2);
});

test('swap_after: past it, new requests for the busy loaded model queue behind the waiting switch', async () => {
  const r = rig([router('a', ['b'])]);
  await ask(r, 'a').promise;
  const b = ask(r, 'b');
  await settle();
  r.clock.advance(SETTINGS.swapAfterMs - 1);
  assert.equal(describe(await ask(r, 'a').promise), 'admitted r after 0ms', 'before swap_after the hot model keeps flowing');
  r.clock.advance(1);
  const late = ask(r, 'a');
  await settle();
  assert.equal(describe(late.outcome()), 'waiting', 'after swap_after it queues behind the switch');
  admitted(r, 0);
  await settle();
  assert.equal(describe(b.outcome()), 'waiting', 'one request of a is still in flight');
  admitted(r, 1);
  await settle();
  assert.equal(describe(b.outcome()), `admitted r after ${SETTINGS.swapAfterMs}ms`);
  assert.equal(describe(late.outcome()), 'waiting', 'the held request for a waits for the next switch');
});

test('a load that times out refuses its followers and holds the model off the node for load_timeout', async () => {
  const r = rig([router('a', ['b'])]);
  const b = await ask(r, 'b').promise;
  assert.ok(b.kind === 'admitted' && b.load !== undefined);
  const follower = ask(r, 'b');
  await settle();
  admitted(r, 0);
  b.load.settle('timed_out');
  const refused = await follower.promise;
  assert.equal(describe(refused), 'unavailable after 0ms');
  assert.ok(refused.kind === 'refused');
  assert.deepEqual(
    refused.excluded.map((e) => e.code),
    ['load_failed'],
  );
  assert.equal(describe(await ask(r, 'b').promise), 'unavailable after 0ms', 'held off');
  r.clock.advance(SETTINGS.loadTimeoutMs);
  assert.equal(describe(await ask(r, 'b').promise), 'admitted r after 0ms', 'tried again once the mark ran out');
});

test('a load that fails otherwise ends the switch without holding the model off', async () => {
  const r = rig([router('a', ['b'])]);
  const b = await ask(r, 'b').promise;
  assert.ok(b.kind === 'admitted' && b.load !== undefined);
  b.load.settle('failed');
  b.load.settle('loaded');
  admitted(r, 0);
  const again = await ask(r, 'b').promise;
  assert.equal(describe(again), 'admitted r after 0ms');
  assert.ok(again.kind === 'admitted' && again.load !== undefined, 'a new load, with its own ticket');
});

test('a request waiting for a switch may wait queue_timeout plus load_timeout (it waits for a load too)', async () => {
  const r = rig([router('a', ['b'])]);
  await ask(r, 'a').promise;
  const forSwitch = ask(r, 'b');
  await settle();
  r.clock.advance(SETTINGS.queueTimeoutMs);
  await settle();
  assert.equal(describe(forSwitch.outcome()), 'waiting');
  r.clock.advance(SETTINGS.loadTimeoutMs);
  await settle();
  assert.equal(describe(forSwitch.outcome()), `queue_timeout after ${SETTINGS.queueTimeoutMs + SETTINGS.loadTimeoutMs}ms`);
});

test('a model the listing shows loading is no new switch: its requests go with a load ticket and nothing is counted', async () => {
  const loading = node('r', {
    kind: 'llamacpp',
    models: [],
    onDemand: { a: 'unloaded', b: 'loading' },
    capacity: { role: 'router', router: { maxInstances: 1, autoload: true } },
  });
  const r = rig([loading]);
  const b = await ask(r, 'b').promise;
  assert.ok(b.kind === 'admitted' && b.load !== undefined, 'bounded by load_timeout');
  assert.deepEqual(
    r.notices.filter((n) => n.kind === 'switch'),
    [],
  );
  assert.equal(describe(await ask(r, 'b').promise), 'admitted r after 0ms', 'no switch in flight holds its followers');
});

test('another node with the model loaded is preferred over any switch', async () => {
  const r = rig([router('a', ['b']), node('other', { kind: 'llamacpp', models: ['b'] })]);
  const b = await ask(r, 'b').promise;
  assert.equal(describe(b), 'admitted other after 0ms');
  assert.ok(b.kind === 'admitted' && b.load === undefined);
  assert.deepEqual(
    r.notices.filter((n) => n.kind === 'switch'),
    [],
  );
});

test('swap_after counts from the oldest waiting request: an interactive one that overtakes the switch waiter neither hides nor restarts it', async () => {
  const r = rig([router('a', ['b'])]);
  await ask(r, 'a').promise;
  const b = ask(r, 'b', { req: { tenant: { name: 'bulk', priority: 'batch', weight: 1 } } });
  await settle();
  r.clock.advance(SETTINGS.swapAfterMs - 1);
  const chat = ask(r, 'b', { req: { tenant: { name: 'chat', priority: 'interactive', weight: 1 } } });
  await settle();
  assert.equal(describe(chat.outcome()), 'waiting', 'it routed at once, as the new head: the router is still full');
  r.clock.advance(1);
  const late = ask(r, 'a');
  await settle();
  assert.equal(describe(late.outcome()), 'waiting', 'swap_after passed for b, by its oldest request');
  admitted(r, 0);
  await settle();
  assert.deepEqual(
    [describe(chat.outcome()), describe(b.outcome())],
    ['admitted r after 1ms', 'waiting'],
    'the interactive one switches the router',
  );
});
