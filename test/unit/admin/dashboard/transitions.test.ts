import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '#src/core/clock.ts';
import { EventBus } from '#src/core/events.ts';
import { DashboardHub } from '#src/admin/dashboard/dashboard-hub.ts';
import { discoveryTransition } from '#src/admin/dashboard/transitions.ts';
import type { DiscoveredModel, DiscoveryState } from '#src/discovery/index.ts';
import type { RegistryEvents } from '#src/nodes/index.ts';
import type { ProxyEvents } from '#src/proxy/index.ts';
import { model } from '#test/fixtures/builders.ts';

const ok = { ok: true, models: [] } as const;
const listing = (phase: DiscoveryState['phase'], models: readonly DiscoveredModel[]): DiscoveryState => ({
  phase,
  models,
  fails: 0,
  empties: 0,
  lastError: undefined,
  lastSuccessAt: undefined,
  dropped: [],
  changedAt: 0,
});

/** A listing whose entries may not be read: the registry held it unchanged, so nobody needs to look inside. */
function untouchable(ids: string[]): { models: readonly DiscoveredModel[]; reads: () => number } {
  let reads = 0;
  const models = new Proxy(Object.freeze(ids.map((id) => model(id))), {
    get(target, key, receiver) {
      reads++;
      return Reflect.get(target, key, receiver) as unknown;
    },
  });
  return { models, reads: () => reads };
}

test('a listing that did not change (the same held array) makes no dashboard transition and is not read', () => {
  const held = untouchable(['a', 'b', 'c']);
  assert.equal(
    discoveryTransition({ node: 'n', result: ok, from: listing('known', held.models), to: listing('known', held.models) }),
    undefined,
  );
  assert.equal(held.reads(), 0, 'an unchanged listing is compared by identity, not id by id');
});

test('a listing that did change is still compared id by id', () => {
  const table: [string[], string[], string | undefined][] = [
    [['a', 'b'], ['b', 'a'], undefined],
    [['a', 'a'], ['a'], undefined],
    [['a'], ['a', 'b', 'c'], 'listing known → known, +2 models'],
    [['a', 'b'], ['b'], 'listing known → known, −1 model'],
    [['a', 'b'], ['c'], 'listing known → known, +1 model, −2 models'],
  ];
  for (const [from, to, want] of table) {
    const e = {
      node: 'n',
      result: ok,
      from: listing(
        'known',
        from.map((id) => model(id)),
      ),
      to: listing(
        'known',
        to.map((id) => model(id)),
      ),
    };
    assert.equal(discoveryTransition(e)?.text, want, `${from.join()} → ${to.join()}`);
  }
  const same = Object.freeze([model('a')]);
  assert.equal(
    discoveryTransition({ node: 'n', result: ok, from: listing('untried', same), to: listing('known', same) })?.text,
    'listing untried → known',
  );
});

test('a listing turned degraded reads as one sentence: the error in parentheses, never after a comma (table)', () => {
  const failed = (models: readonly DiscoveredModel[], lastError: string): DiscoveryState => ({
    ...listing('degraded', models),
    lastError,
  });
  const error = 'GET http://10.0.0.5:8000/v1/models: connect ECONNREFUSED';
  const a = [model('a')];
  const table: [DiscoveryState, DiscoveryState, string][] = [
    [listing('known', a), failed(a, error), `listing known → degraded (${error})`],
    [listing('known', [model('a'), model('b')]), failed(a, error), `listing known → degraded, −1 model (${error})`],
    [listing('known', a), listing('known', [model('a'), model('b')]), 'listing known → known, +1 model'],
  ];
  for (const [from, to, want] of table) {
    const text = discoveryTransition({ node: 'n', result: ok, from, to })?.text;
    assert.equal(text, want);
    assert.doesNotMatch(text ?? '', /, \(/, 'no stray comma before the reason');
  }
});

test('the hub: a thousand unchanged listings leave the Events view as it was, and with no page open no rows are built', () => {
  const clock = new ManualClock(1_700_000_000_000);
  const registryEvents = new EventBus<RegistryEvents>();
  let snapshots = 0;
  const hub = new DashboardHub({
    clock,
    registryEvents,
    proxyEvents: new EventBus<ProxyEvents>(),
    registry: {
      snapshot: () => {
        snapshots++;
        return { nodes: [], inFlight: () => 0, usage: () => ({ requests: 0, tokens: 0 }), now: clock.now() };
      },
    },
    queueDepths: () => ({}),
    aliases: () => new Map(),
  });
  const held = untouchable(['a', 'b']);
  const state = listing('known', held.models);
  for (let i = 0; i < 1_000; i++) {
    registryEvents.emit('node:discovery', { node: `n${i % 10}`, result: ok, from: state, to: state });
    clock.advance(10);
  }
  assert.equal(snapshots, 0, 'no dashboard client: the registry is not read, no row is built');
  assert.deepEqual(hub.snapshot().transitions, []);
  assert.equal(held.reads(), 0);
  hub.close();
});
