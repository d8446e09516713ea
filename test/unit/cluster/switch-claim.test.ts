// The switch claim as the store keeps it (cluster/switch-lua.ts), as a table: what an HMGET of a
// node's claim reads as (none, a claim, a malformed one), and the arguments a claim is written with.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { claimArgs, claimOf, nodeOfSwitchKey, switchKey } from '#src/cluster/switch-lua.ts';
import { remoteCounts, ticketOfClaim } from '#src/cluster/shared-switches.ts';

const ROWS: readonly { name: string; values: readonly unknown[]; claim: ReturnType<typeof claimOf> }[] = [
  { name: 'no claim (every field nil)', values: [null, null, null, null, null, null, null], claim: undefined },
  {
    name: 'a request load, not loaded yet, with its victim',
    values: ['r0/a/1', 'r0', 'm1', 'load', 'request', '0', 'm0'],
    claim: { holder: 'r0/a/1', replica: 'r0', model: 'm1', action: 'load', by: 'request', loaded: false, victim: 'm0' },
  },
  {
    name: 'an admin unload, no victim',
    values: ['r1/b/2', 'r1', 'm2', 'unload', 'admin', '0', ''],
    claim: { holder: 'r1/b/2', replica: 'r1', model: 'm2', action: 'unload', by: 'admin', loaded: false, victim: undefined },
  },
  {
    name: 'a loaded reconciler load',
    values: ['r2/c/3', 'r2', 'm3', 'load', 'reconciler', '1', ''],
    claim: { holder: 'r2/c/3', replica: 'r2', model: 'm3', action: 'load', by: 'reconciler', loaded: true, victim: undefined },
  },
  { name: 'an unknown action is not a claim', values: ['h', 'r', 'm', 'evict', 'request', '0', ''], claim: undefined },
  { name: 'an unknown origin is not a claim', values: ['h', 'r', 'm', 'load', 'someone', '0', ''], claim: undefined },
];

for (const row of ROWS) {
  test(`switch claim: ${row.name}`, () => {
    assert.deepEqual(claimOf(row.values), row.claim);
  });
}

test('switch claim: written as read back; keys name their node', () => {
  const claim = {
    holder: 'r0/a/1',
    replica: 'r0',
    model: 'm1',
    action: 'load',
    by: 'request',
    loaded: true,
    victim: 'm0',
  } as const;
  assert.deepEqual(claimOf([claim.holder, ...claimArgs(claim)]), claim);
  assert.equal(nodeOfSwitchKey('p:', switchKey('p:', 'router')), 'router');
  assert.equal(nodeOfSwitchKey('p:', 'p:{n\u0000m}:leases'), undefined);
  assert.equal(nodeOfSwitchKey('q:', switchKey('p:', 'router')), undefined);
});

const COUNTS: readonly { name: string; shared: boolean; ageMs: number; counts: boolean }[] = [
  { name: 'shared: a cached claim counts until the store says otherwise', shared: true, ageMs: 60_000, counts: true },
  { name: 'store lost: a claim seen just before still counts', shared: false, ageMs: 1_000, counts: true },
  {
    name: 'store lost: a claim older than lease_ttl no longer counts (its lease expired)',
    shared: false,
    ageMs: 3_000,
    counts: false,
  },
];

for (const row of COUNTS) {
  test(`remote switch claim: ${row.name}`, () => {
    assert.equal(remoteCounts(row.shared, 10_000, 10_000 + row.ageMs, 3_000), row.counts);
  });
}

test('a store claim reads as a ticket of its replica', () => {
  assert.deepEqual(
    ticketOfClaim({ holder: 'r1/x/1', replica: 'r1', model: 'm', action: 'load', by: 'request', loaded: false, victim: 'v' }),
    { model: 'm', action: 'load', by: 'request', loaded: false, victim: 'v', replica: 'r1' },
  );
});
