// Issue 26 ([cluster], a router's one switch at a time across replicas), the scheduler's side with
// a fake of the store's sharing: a request whose switch claim another replica holds releases its
// local lease, waits behind that replica's switch (the reason naming it) by its own deadline, not a
// fresh queue_timeout; one whose victim another replica uses waits for it to go idle there.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SwitchTickets, type ClaimAnswer, type NodeView, type SwitchSharing, type SwitchTicket } from '#src/nodes/index.ts';
import { node } from '#test/fixtures/builders.ts';
import { ask, describe, rig, settle, SETTINGS } from './fake-fleet.ts';

function router(loaded: string, others: readonly string[]): NodeView {
  return node('r', {
    kind: 'llamacpp',
    models: [loaded],
    onDemand: Object.fromEntries(others.map((m) => [m, 'unloaded'])),
    capacity: { role: 'router', router: { maxInstances: 1, autoload: true } },
  });
}

/** The store's side, answered by the test: each claim waits until the test resolves it. */
function fakeSharing(): SwitchSharing & {
  readonly claims: ((answer: ClaimAnswer) => void)[];
  held: SwitchTicket | undefined;
  busy: Set<string>;
} {
  const fake = {
    claims: [] as ((answer: ClaimAnswer) => void)[],
    held: undefined as SwitchTicket | undefined,
    busy: new Set<string>(),
    remote: (): SwitchTicket | undefined => fake.held,
    remoteHeld: (): readonly (readonly [string, SwitchTicket])[] => (fake.held === undefined ? [] : [['r', fake.held]]),
    claim: (): Promise<ClaimAnswer> => new Promise<ClaimAnswer>((resolve) => fake.claims.push(resolve)),
    update: (): void => {},
    release: (): void => {},
    busyElsewhere: (): ReadonlySet<string> => fake.busy,
    caughtUp: (): void => {},
  };
  return fake;
}

test('a claim another replica holds: the local lease goes back, the request waits behind that switch by its own deadline, the reason naming the replica', async () => {
  const book = new SwitchTickets();
  const sharing = fakeSharing();
  book.share(sharing);
  const r = rig([router('a', ['b', 'c'])], { book });
  const b = ask(r, 'b');
  await settle();
  assert.equal(sharing.claims.length, 1, 'the switch waits for its claim across replicas');
  r.clock.advance(600);
  // Meanwhile replica r9 claimed the router for c.
  const theirs: SwitchTicket = { model: 'c', action: 'load', by: 'request', loaded: false, victim: 'a', replica: 'r9' };
  sharing.held = theirs;
  sharing.claims[0]?.({ kind: 'held', ticket: theirs });
  await settle();
  assert.equal(describe(b.outcome()), 'waiting');
  assert.equal(r.leases[0]?.node, 'r');
  assert.equal(book.current('r'), theirs, "the local ticket went back; r9's switch is the node's");
  // b loads its model: queue_timeout + load_timeout in all, 600 ms of it gone already.
  const left = SETTINGS.queueTimeoutMs + SETTINGS.loadTimeoutMs - 600;
  r.clock.advance(left - 1);
  await settle();
  assert.equal(describe(b.outcome()), 'waiting');
  r.clock.advance(1);
  await settle();
  const refused = b.outcome();
  assert.ok(refused?.kind === 'refused' && refused.reason === 'queue_timeout', describe(refused));
  assert.match(refused.excluded.map((e) => e.detail).join('; '), /replica r9's switch/);
});

test('a victim another replica uses: the switch is not started; the request waits until it is idle there, then claims again', async () => {
  const book = new SwitchTickets();
  const sharing = fakeSharing();
  book.share(sharing);
  const r = rig([router('a', ['b'])], { book, evict: async () => ({ ok: true }) });
  const b = ask(r, 'b');
  await settle();
  assert.equal(sharing.claims.length, 1);
  sharing.busy.add('a');
  sharing.claims[0]?.({ kind: 'victim_busy', victim: 'a', replicas: ['r9'] });
  await settle();
  assert.equal(describe(b.outcome()), 'waiting', 'a is in use on r9: no switch, no new claim');
  assert.equal(sharing.claims.length, 1);
  assert.equal(book.current('r'), undefined);
  sharing.busy.clear();
  r.scheduler.fleetChanged();
  await settle();
  assert.equal(sharing.claims.length, 2, 'idle everywhere now: claimed again');
  sharing.claims[1]?.(undefined);
  await settle();
  assert.equal(describe(b.outcome()), 'admitted r after 0ms');
});
