// The scheduler's pure pieces: which fleet changes let waiting requests try again (which asleep node
// to wake is routing's wakeTarget, tested beside it; the one RouteRequest builder is routing's, route-request.test.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventBus } from '#src/core/events.ts';
import type { RegistryEvents } from '#src/nodes/index.ts';
import { onRoomMayOpen } from '#src/scheduler/index.ts';
import { node } from '#test/fixtures/builders.ts';

test('capacity, health, listing and re-admission changes let waiting requests retry; other events do not', () => {
  const events = new EventBus<RegistryEvents>();
  const seen: string[] = [];
  const unsubscribe = onRoomMayOpen(events, () => seen.push('retry'));
  const health = { status: 'healthy', fails: 0, lastError: undefined, lastProbeAt: 0, changedAt: 0 } as const;
  events.emit('node:capacity', { node: 'a', capacity: node('a').capacity });
  events.emit('node:health-changed', { node: 'a', from: { ...health, status: 'dead' }, to: health });
  events.emit('node:discovery', {
    node: 'a',
    result: { ok: true, models: [] },
    from: node('a').discovery,
    to: node('a').discovery,
  });
  events.emit('node:readmitted', { node: 'a' });
  events.emit('node:added', { node: 'b' });
  events.emit('node:probed', { node: 'a', outcome: { ok: true, latencyMs: 1 } });
  assert.equal(seen.length, 4);
  unsubscribe();
  events.emit('node:readmitted', { node: 'a' });
  assert.equal(seen.length, 4, 'unsubscribed');
});
