// Request switches on a full router, driven by events against the recording fake fleet: the
// gateway names the idle victim (never pinned) and answers the admission once the victim is
// unloaded; a victim that would not unload holds the model off the router with the reason; and a
// load the model manager holds in the one switch book makes a request switch wait, and vice versa.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SwitchTickets, type NodeView } from '#src/nodes/index.ts';
import type { EvictionResult } from '#src/scheduler/index.ts';
import { node } from '#test/fixtures/builders.ts';
import { ask, describe, rig, settle } from './fake-fleet.ts';

function router(loaded: readonly string[], others: readonly string[], max = 1): NodeView {
  return node('r', {
    kind: 'llamacpp',
    models: loaded,
    onDemand: Object.fromEntries(others.map((m) => [m, 'unloaded'])),
    capacity: { role: 'router', router: { maxInstances: max, autoload: true } },
  });
}

function deferredEvictions(): {
  asked: string[];
  finish: (result: EvictionResult) => void;
  evict: (node: string, victim: string, model: string) => Promise<EvictionResult>;
} {
  const asked: string[] = [];
  const waiting: ((result: EvictionResult) => void)[] = [];
  return {
    asked,
    finish: (result) => waiting.shift()?.(result),
    evict: (node, victim, model) => {
      asked.push(`${node}: ${victim} for ${model}`);
      return new Promise((resolve) => waiting.push(resolve));
    },
  };
}

test('a switch on a full router is admitted once the victim the gateway chose is unloaded; the victim waits meanwhile', async () => {
  const evictions = deferredEvictions();
  const book = new SwitchTickets();
  const r = rig([router(['a'], ['b'])], { book, evict: evictions.evict });
  const b = ask(r, 'b');
  await settle();
  assert.deepEqual(evictions.asked, ['r: a for b']);
  assert.equal(describe(b.outcome()), 'waiting', 'not sent before the victim is gone');
  assert.deepEqual(book.current('r'), { model: 'b', action: 'load', by: 'request', loaded: false, victim: 'a' });
  const a = ask(r, 'a');
  await settle();
  assert.equal(describe(a.outcome()), 'waiting', 'the victim takes no new request');
  evictions.finish({ ok: true });
  await settle();
  assert.equal(describe(b.outcome()), 'admitted r after 0ms');
});

test('a victim that will not unload: the ticket goes back, the model is held off with the reason, the request is refused', async () => {
  const evictions = deferredEvictions();
  const book = new SwitchTickets();
  const r = rig([router(['a'], ['b'])], { book, evict: evictions.evict });
  const b = ask(r, 'b');
  await settle();
  evictions.finish({ ok: false, reason: 'HTTP 500' });
  await settle();
  const outcome = b.outcome();
  assert.equal(outcome?.kind, 'refused');
  assert.ok(
    outcome?.kind === 'refused' &&
      outcome.excluded.some(
        (e) => e.code === 'load_failed' && /unloading the idle model 'a' first .*HTTP 500/.test(e.detail ?? ''),
      ),
    JSON.stringify(outcome),
  );
  assert.equal(book.current('r'), undefined);
  assert.equal(r.leases.length, 1);
});

test('no eviction is asked when the only other model is pinned: the request is refused `pinned`', async () => {
  const evictions = deferredEvictions();
  const r = rig([router(['a'], ['b'])], {
    evict: evictions.evict,
    protectedModels: () => ({ pinned: new Set(['a']), wanted: new Set() }),
  });
  const b = await ask(r, 'b').promise;
  assert.equal(b.kind, 'refused');
  assert.ok(b.kind === 'refused' && b.excluded.some((e) => e.code === 'pinned'));
  assert.deepEqual(evictions.asked, []);
});

test('one book: a reconciler load holding the ticket makes a request switch wait; the request switch refuses the next manager op', async () => {
  const book = new SwitchTickets();
  const r = rig([router(['a'], ['b', 'c'], 2)], { book });
  assert.equal(book.take('r', { model: 'c', action: 'load', by: 'reconciler', loaded: false, victim: undefined }).ok, true);
  const b = ask(r, 'b');
  const a = ask(r, 'a');
  await settle();
  assert.equal(describe(b.outcome()), 'waiting', 'one switch at a time');
  assert.equal(describe(a.outcome()), 'admitted r after 0ms', 'a loaded model keeps serving');
  book.release('r', 'c');
  r.scheduler.fleetChanged();
  await settle();
  assert.equal(describe(b.outcome()), 'admitted r after 0ms');
  const taken = book.take('r', { model: 'c', action: 'load', by: 'admin', loaded: false, victim: undefined });
  assert.equal(taken.ok, false);
  assert.ok(!taken.ok && /loading b for a request/.test(taken.reason));
});
