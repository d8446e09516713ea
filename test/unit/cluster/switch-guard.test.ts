// Issue 26 (a router's one switch at a time across replicas), the pure pieces of the guard as
// tables: a released switch's record as the store keeps it, which replicas a victim's leases name,
// how long a remote switch counts, how a refusal reads (naming the replica), what is left of a
// request's deadline when it routes again, and when this replica's listing caught up with another
// replica's released switch.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { claimOf, replicasOfLeases, SETTLED_TTL_MS } from '#src/cluster/switch-lua.ts';
import { answerOf, describeRemote, remoteCounts } from '#src/cluster/shared-switches.ts';
import { leftOf, modelsMaxOf } from '#src/cluster/cluster-admission.ts';
import { refusalOf, type SwitchTicket } from '#src/nodes/index.ts';
import { remoteCaughtUp } from '#src/scheduler/router-switches.ts';
import { node } from '#test/fixtures/builders.ts';

test('a released switch reads as its record: the holder that released it, settled', () => {
  assert.deepEqual(claimOf([null, 'r0', 'm1', 'load', 'request', '1', 'm0', 'r0/a/1']), {
    holder: 'r0/a/1',
    replica: 'r0',
    model: 'm1',
    action: 'load',
    by: 'request',
    loaded: true,
    victim: 'm0',
    settled: true,
  });
  assert.equal(claimOf([null, 'r0', 'm1', 'load', 'request', '1', 'm0', '']), undefined, 'no holder and no record: nothing');
  assert.equal(claimOf(['r0/a/2', 'r0', 'm1', 'load', 'request', '0', '', undefined])?.settled, undefined, 'held: not settled');
});

const LEASES: readonly { name: string; ids: readonly unknown[]; replicas: readonly string[] }[] = [
  { name: 'none', ids: [], replicas: [] },
  { name: 'one replica, two leases: named once', ids: ['r1/ab/1', 'r1/ab/2'], replicas: ['r1'] },
  { name: 'two replicas', ids: ['r1/ab/1', 'r2/cd/7'], replicas: ['r1', 'r2'] },
  { name: 'a replica name with a slash', ids: ['site/r1/ab/1'], replicas: ['site/r1'] },
  { name: 'not a lease id', ids: ['x', 3], replicas: [] },
];

for (const row of LEASES) {
  test(`the replicas a victim's leases name: ${row.name}`, () => {
    assert.deepEqual(replicasOfLeases(row.ids), row.replicas);
  });
}

const COUNTS: readonly { name: string; shared: boolean; ageMs: number; settled: boolean; counts: boolean }[] = [
  { name: 'shared, held: until the store says otherwise', shared: true, ageMs: 120_000, settled: false, counts: true },
  { name: 'shared, released (listing catching up): a while', shared: true, ageMs: 1_000, settled: true, counts: true },
  {
    name: 'shared, released: no longer than the record is kept',
    shared: true,
    ageMs: SETTLED_TTL_MS,
    settled: true,
    counts: false,
  },
  { name: 'store lost, released: until lease_ttl', shared: false, ageMs: 3_000, settled: true, counts: false },
];

for (const row of COUNTS) {
  test(`a remote switch counts: ${row.name}`, () => {
    assert.equal(remoteCounts(row.shared, 10_000, 10_000 + row.ageMs, 3_000, row.settled), row.counts);
  });
}

const remote = (extra: Partial<SwitchTicket> = {}): SwitchTicket => ({
  model: 'm1',
  action: 'load',
  by: 'request',
  loaded: false,
  victim: 'm0',
  replica: 'r1',
  ...extra,
});

const TEXTS: readonly { name: string; ticket: SwitchTicket; text: string }[] = [
  { name: 'a switch loading', ticket: remote(), text: 'replica r1 is switching the router to m1 (unloading m0)' },
  {
    name: 'a switch loaded',
    ticket: remote({ loaded: true, victim: undefined }),
    text: 'replica r1 is switching the router to m1, loaded',
  },
  {
    name: 'a released switch',
    ticket: remote({ loaded: true, settled: true }),
    text: "replica r1 switched the router to m1 (unloading m0), this replica's listing catching up",
  },
  {
    name: 'an unload',
    ticket: remote({ action: 'unload', by: 'admin', victim: undefined }),
    text: 'replica r1 is unloading m1 here',
  },
];

for (const row of TEXTS) {
  test(`a refusal names the replica: ${row.name}`, () => {
    assert.equal(describeRemote(row.ticket), row.text);
  });
}

test('a refused claim reads as the switch holding the node, or the replicas using its victim', () => {
  const ask: SwitchTicket = { model: 'm2', action: 'load', by: 'request', loaded: false, victim: 'm0' };
  const held = answerOf({
    kind: 'held',
    claim: { holder: 'r1/a/1', replica: 'r1', model: 'm1', action: 'load', by: 'request', loaded: false, victim: 'm0' },
  });
  assert.deepEqual(held, { kind: 'held', ticket: remote() });
  assert.deepEqual(refusalOf(held, ask), {
    ok: false,
    reason:
      'a switch is under way on this node: loading m1 for a request on replica r1; one at a time (asked: load m2 for a request)',
  });
  assert.deepEqual(refusalOf({ kind: 'victim_busy', victim: 'm0', replicas: ['r1', 'r2'] }, ask), {
    ok: false,
    reason:
      'the idle model m0 this switch would unload is in use on replica r1, r2; waits for it to go idle there (asked: load m2)',
  });
});

test('a request routed again keeps its deadline: what is left of its queue timeout', () => {
  const settings = { queueTimeoutMs: 10_000, maxQueue: 5, missWaitMs: 0, swapAfterMs: 0, loadTimeoutMs: 1_000 };
  assert.equal(leftOf(settings, 0).queueTimeoutMs, 10_000);
  assert.equal(leftOf(settings, 2_500).queueTimeoutMs, 7_500);
  assert.equal(leftOf(settings, 12_000).queueTimeoutMs, 0, 'past it: refused at once when it has to wait');
  assert.equal(leftOf(settings, 2_500).loadTimeoutMs, 1_000);
});

test('the switch guard applies to limited routers only', () => {
  assert.equal(modelsMaxOf({ capacity: { role: 'router', router: { maxInstances: 1 } } }), 1);
  assert.equal(modelsMaxOf({ capacity: { role: 'router', router: { maxInstances: 0 } } }), 0, 'unlimited');
  assert.equal(modelsMaxOf({ capacity: { role: 'router' } }), 0, 'not reported');
  assert.equal(modelsMaxOf({ capacity: { role: 'single', router: { maxInstances: 1 } } }), 0);
});

const listing = (running: readonly string[], unloaded: readonly string[]): ReturnType<typeof node> =>
  node('r', {
    kind: 'llamacpp',
    models: [...running],
    onDemand: Object.fromEntries(unloaded.map((m) => [m, 'unloaded'])),
    capacity: { role: 'router', router: { maxInstances: 1, autoload: true } },
  });

const CAUGHT: readonly {
  name: string;
  ticket: SwitchTicket;
  running: readonly string[];
  unloaded: readonly string[];
  caught: boolean;
}[] = [
  {
    name: 'a load: the listing shows its model running',
    ticket: remote({ loaded: true, settled: true }),
    running: ['m1'],
    unloaded: ['m0'],
    caught: true,
  },
  {
    name: 'a load: the listing still shows the victim',
    ticket: remote({ loaded: true, settled: true }),
    running: ['m0'],
    unloaded: ['m1'],
    caught: false,
  },
  {
    name: 'a failed load: the victim gone is enough',
    ticket: remote({ settled: true }),
    running: [],
    unloaded: ['m0', 'm1'],
    caught: true,
  },
  {
    name: 'a failed load: the victim still listed',
    ticket: remote({ settled: true }),
    running: ['m0'],
    unloaded: ['m1'],
    caught: false,
  },
  {
    name: 'an unload: the model gone',
    ticket: remote({ action: 'unload', victim: undefined, settled: true }),
    running: [],
    unloaded: ['m1'],
    caught: true,
  },
  {
    name: 'an unload: the model still listed',
    ticket: remote({ action: 'unload', victim: undefined, settled: true }),
    running: ['m1'],
    unloaded: [],
    caught: false,
  },
];

for (const row of CAUGHT) {
  test(`this replica's listing caught up with another's released switch: ${row.name}`, () => {
    assert.equal(remoteCaughtUp(row.ticket, listing(row.running, row.unloaded)), row.caught);
  });
}

test('a node no longer listed: nothing to wait for', () => {
  assert.equal(remoteCaughtUp(remote({ loaded: true, settled: true }), undefined), true);
});
