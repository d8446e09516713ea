import { test } from 'node:test';
import assert from 'node:assert/strict';
import { initialHealthState, magicPacket, observeProbe } from '#src/nodes/index.ts';
import { defaultFilters, wakeCandidates } from '#src/routing/index.ts';
import { node, request, snapshotOf } from '#test/fixtures/builders.ts';

test('a magic packet is six 0xFF bytes then the MAC sixteen times', () => {
  const packet = magicPacket('01:23:45:67:89:ab');
  assert.equal(packet.length, 102);
  assert.ok(packet.subarray(0, 6).equals(Buffer.alloc(6, 0xff)));
  for (let i = 0; i < 16; i++) assert.equal(packet.subarray(6 + i * 6, 12 + i * 6).toString('hex'), '0123456789ab');
  assert.throws(() => magicPacket('01:23'));
});

test('a node that can be woken is asleep, not dead, when its probes fail', () => {
  let state = initialHealthState(0);
  for (let i = 0; i < 3; i++)
    state = observeProbe(state, { ok: false, error: 'ECONNREFUSED' }, { failThreshold: 3, canSleep: true }, i);
  assert.equal(state.status, 'asleep');
  assert.equal(observeProbe(state, { ok: true, latencyMs: 1 }, { failThreshold: 3, canSleep: true }, 9).status, 'healthy');
});

function asleep(name: string, options: Parameters<typeof node>[1]) {
  const view = node(name, options);
  return { ...view, health: { ...view.health, status: 'asleep' as const } };
}

test('only asleep nodes that could serve the request by their last known figures are woken', () => {
  const snapshot = snapshotOf([
    asleep('has-it', { models: ['m'], phase: 'expired', capacity: { role: 'single', host: { nCtx: 8192, slots: 1 } } }),
    asleep('lacks-it', { models: ['other'], phase: 'expired' }),
    asleep('too-small', { models: ['m'], phase: 'expired', capacity: { role: 'single', host: { nCtx: 512, slots: 1 } } }),
    asleep('never-seen', {}),
    node('awake', { models: ['m'], health: 'dead' }),
  ]);
  const names = wakeCandidates(request('m', { promptTokens: 1000 }), snapshot, defaultFilters()).map((n) => n.spec.name);
  assert.deepEqual(names, ['has-it', 'never-seen']);
  assert.deepEqual(wakeCandidates(request('m', { promptTokens: 1000, group: 'g' }), snapshot, defaultFilters()), []);
});
