// The node loops' reactions to each other (src/nodes/reactions.ts, node-round.ts): which health
// changes are recoveries, the wake probe cadence, when a listing is followed by a capacity poll,
// and the wiring that probes an ejected node at once and re-lists a recovered one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventBus } from '#src/core/events.ts';
import type { HealthState, HealthStatus, RegistryEvents } from '#src/nodes/index.ts';
import { isRecovery, nodeReactions, wakeProbeIntervalMs, wantsCapacity } from '#src/nodes/index.ts';
import { model } from '#test/fixtures/builders.ts';

const health = (status: HealthStatus): HealthState => ({ status, fails: 0, lastError: undefined, lastProbeAt: 0, changedAt: 0 });

test('a recovery is asleep or dead becoming healthy, nothing else', () => {
  const cases: [HealthStatus, HealthStatus, boolean][] = [
    ['asleep', 'healthy', true],
    ['dead', 'healthy', true],
    ['degraded', 'healthy', false],
    ['unknown', 'healthy', false],
    ['healthy', 'healthy', false],
    ['dead', 'degraded', false],
    ['asleep', 'dead', false],
  ];
  for (const [from, to, expected] of cases) assert.equal(isRecovery(health(from), health(to)), expected, `${from} → ${to}`);
});

test('the wake probe cadence is a fifth of the health interval, within 100 ms and 1 s', () => {
  const cases: [number, number][] = [
    [200, 100],
    [499, 100],
    [500, 100],
    [2_000, 400],
    [5_000, 1_000],
    [60_000, 1_000],
    [2_503, 500],
  ];
  for (const [interval, expected] of cases) assert.equal(wakeProbeIntervalMs(interval), expected, `interval ${interval}`);
});

test('a capacity poll follows only a successful listing with models, in a round still running', () => {
  const listed = { ok: true as const, models: [model('m')] };
  assert.equal(wantsCapacity(listed, false), true);
  assert.equal(wantsCapacity(listed, true), false, 'the round was aborted');
  assert.equal(wantsCapacity({ ok: true, models: [] }, false), false, 'nothing listed');
  assert.equal(wantsCapacity({ ok: false, reason: 'timeout', error: 'timed out' }, false), false);
});

test('an ejected node is probed at once; a recovered one returns to the normal cadence and is re-listed', () => {
  const events = new EventBus<RegistryEvents>();
  const calls: string[] = [];
  const off = nodeReactions({
    events,
    checker: {
      probeNow: (node) => calls.push(`probe now ${node}`),
      probeNormally: (node) => calls.push(`probe normally ${node}`),
    },
    relist: (nodes) => calls.push(`relist ${nodes.join(',')}`),
  });
  events.emit('node:ejected', { node: 'a', untilMs: 10 });
  events.emit('node:health-changed', { node: 'b', from: health('dead'), to: health('healthy') });
  events.emit('node:health-changed', { node: 'c', from: health('healthy'), to: health('degraded') });
  assert.deepEqual(calls, ['probe now a', 'probe normally b', 'relist b']);
  off();
  events.emit('node:ejected', { node: 'a', untilMs: 10 });
  assert.equal(calls.length, 3, 'unsubscribed');
});
