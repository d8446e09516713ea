import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '#src/core/clock.ts';
import {
  PeerDialer,
  parsePeerAddress,
  seenAgain,
  type DialTarget,
  type Dialer,
  type SightingAction,
} from '#src/mesh/gossip/peer-dialer.ts';

const A = '12D3KooWFgMjaskj9ud8bnG2BpXLvN6YwCgqBr9fVUXa7r3vu8uY';
const B = '12D3KooWJg5PpbSKkEfjEypKwXn5XA2bVWHxzP1kijoy2ZhXDUhB';
const addrA = `/ip4/127.0.0.1/tcp/4001/p2p/${A}`;
const addrB = `/ip4/127.0.0.1/tcp/4002/p2p/${B}`;

/** A dialer whose peers are up or down as the test says; records each dial. */
class FakeDialer implements Dialer {
  readonly up = new Set<string>();
  readonly connectedPeers = new Set<string>();
  readonly dials: { peer: string; at: number }[] = [];
  readonly clock: ManualClock;
  constructor(clock: ManualClock) {
    this.clock = clock;
  }
  async dial(target: DialTarget): Promise<void> {
    this.dials.push({ peer: target.peerId, at: this.clock.now() });
    if (!this.up.has(target.peerId)) throw new Error('connection refused');
    this.connectedPeers.add(target.peerId);
  }
  connected(peerId: string): boolean {
    return this.connectedPeers.has(peerId);
  }
}

const settle = (): Promise<void> => new Promise((r) => setImmediate(r));

async function advance(clock: ManualClock, ms: number, stepMs = 50): Promise<void> {
  for (let t = 0; t < ms; t += stepMs) {
    clock.advance(stepMs);
    await settle();
  }
}

function setup(): { clock: ManualClock; fake: FakeDialer; dialer: PeerDialer; failures: number[]; bad: string[] } {
  const clock = new ManualClock(0);
  const fake = new FakeDialer(clock);
  const failures: number[] = [];
  const bad: string[] = [];
  const dialer = new PeerDialer({
    dialer: fake,
    clock,
    random: () => 0.999999,
    policy: { baseMs: 500, maxMs: 4_000 },
    events: { dialFailed: (_t, _a, _e, nextMs) => failures.push(nextMs), badAddress: (_addr, problem) => bad.push(problem) },
  });
  return { clock, fake, dialer, failures, bad };
}

test('a peer address must be a multiaddr naming its peer', () => {
  assert.deepEqual(parsePeerAddress(addrA), { addr: addrA, peerId: A });
  const missing = parsePeerAddress('/ip4/127.0.0.1/tcp/4001');
  assert.ok('problem' in missing && /\/p2p\/<peer id>/.test(missing.problem));
  const broken = parsePeerAddress('/ip4/nonsense/tcp/1');
  assert.ok('problem' in broken && /not a multiaddr/.test(broken.problem));
});

test('bootstrap peers are dialled at once; a refused dial is retried with doubling back-off up to the cap', async () => {
  const { clock, fake, dialer, failures } = setup();
  dialer.setPeers([addrA]);
  await advance(clock, 0 + 50);
  assert.deepEqual(
    fake.dials.map((d) => d.at),
    [0],
  );
  await advance(clock, 20_000);
  assert.deepEqual(failures.slice(0, 6), [500, 1_000, 2_000, 4_000, 4_000, 4_000]);
  // (The first failure settles after the step that fired it, hence from the second dial on.)
  const gaps = fake.dials.slice(2).map((d, i) => d.at - fake.dials[i + 1]!.at);
  assert.deepEqual(gaps.slice(0, 4), [1_000, 2_000, 4_000, 4_000]);
  dialer.stop();
  assert.equal(clock.pendingTimers(), 0);
});

test('a peer that comes up is connected and no longer dialled; a drop redials it after the shortest delay', async () => {
  const { clock, fake, dialer } = setup();
  dialer.setPeers([addrA]);
  await advance(clock, 3_000);
  fake.up.add(A);
  await advance(clock, 5_000);
  assert.equal(fake.connected(A), true);
  const dialsWhenUp = fake.dials.length;
  await advance(clock, 10_000);
  assert.equal(fake.dials.length, dialsWhenUp, 'no dial while connected');
  // The connection lived longer than the cap: back to the first delay.
  fake.connectedPeers.delete(A);
  dialer.peerDisconnected(A);
  const droppedAt = clock.now();
  await advance(clock, 1_000);
  assert.equal(fake.dials.length, dialsWhenUp + 1);
  assert.equal(fake.dials.at(-1)!.at - droppedAt, 500);
  assert.equal(fake.connected(A), true);
  dialer.stop();
});

test('a connection that drops right after it opened keeps climbing the back-off (flapping peer)', async () => {
  const { clock, fake, dialer } = setup();
  fake.up.add(A);
  dialer.setPeers([addrA]);
  await advance(clock, 100);
  const gaps: number[] = [];
  for (let i = 0; i < 4; i += 1) {
    fake.connectedPeers.delete(A);
    dialer.peerDisconnected(A);
    const at = clock.now();
    const before = fake.dials.length;
    for (let waited = 0; fake.dials.length === before && waited < 10_000; waited += 10) await advance(clock, 10, 10);
    assert.equal(fake.dials.length, before + 1);
    gaps.push(fake.dials.at(-1)!.at - at);
  }
  assert.deepEqual(gaps, [500, 1_000, 2_000, 4_000]);
  dialer.stop();
});

test('a disconnect of a peer that is not a bootstrap peer dials nothing', async () => {
  const { clock, fake, dialer } = setup();
  fake.up.add(A);
  dialer.setPeers([addrA]);
  await advance(clock, 100);
  dialer.peerDisconnected(B);
  await advance(clock, 5_000);
  assert.deepEqual(
    fake.dials.map((d) => d.peer),
    [A],
  );
  dialer.stop();
});

test('setPeers applies a reload: a new peer is dialled, a removed one is no longer redialled, a bad one is reported and skipped', async () => {
  const { clock, fake, dialer, bad } = setup();
  dialer.setPeers([addrA]);
  await advance(clock, 1_000);
  dialer.setPeers([addrB, '/ip4/127.0.0.1/tcp/9']);
  assert.equal(bad.length, 1);
  assert.match(bad[0]!, /\/p2p\/<peer id>/);
  assert.deepEqual(
    dialer.targets().map((t) => t.peerId),
    [B],
  );
  const dialsOfA = fake.dials.filter((d) => d.peer === A).length;
  await advance(clock, 10_000);
  assert.equal(fake.dials.filter((d) => d.peer === A).length, dialsOfA, 'A is no longer dialled');
  assert.ok(fake.dials.filter((d) => d.peer === B).length >= 3, 'B is dialled and retried');
  dialer.stop();
  assert.equal(clock.pendingTimers(), 0);
});

test('a peer already connected (it dialled us) is not dialled again', async () => {
  const { clock, fake, dialer } = setup();
  fake.connectedPeers.add(A);
  dialer.setPeers([addrA]);
  await advance(clock, 5_000);
  assert.deepEqual(fake.dials, []);
  dialer.stop();
});

const POLICY = { baseMs: 500, maxMs: 4_000 };
const facts = {
  sighting: 'message',
  connected: false,
  dialing: false,
  attempt: 5,
  lastResetAt: undefined,
  nowMs: 10_000,
} as const;

test('seenAgain: what a sighting of a bootstrap peer changes (table)', () => {
  const table: { name: string; facts: Parameters<typeof seenAgain>[0]; want: SightingAction }[] = [
    { name: 'its record arrives, not connected: dial now', facts, want: { kind: 'dial_now' } },
    {
      name: 'it connected to us after failed dials: cancel the redial, start the back-off again',
      facts: { ...facts, sighting: 'connected', connected: true },
      want: { kind: 'connected', reset: true },
    },
    {
      name: 'it connected, no failed dials: nothing to reset',
      facts: { ...facts, sighting: 'connected', connected: true, attempt: 0 },
      want: { kind: 'connected', reset: false },
    },
    {
      name: 'its record over an open connection: nothing',
      facts: { ...facts, connected: true },
      want: { kind: 'none', why: 'connected' },
    },
    { name: 'during our own dial: nothing', facts: { ...facts, dialing: true }, want: { kind: 'none', why: 'dialing' } },
    {
      name: 'reset less than maxMs ago: keep the back-off',
      facts: { ...facts, lastResetAt: 10_000 - 3_999 },
      want: { kind: 'none', why: 'reset_recently' },
    },
    { name: 'reset maxMs ago: dial now again', facts: { ...facts, lastResetAt: 10_000 - 4_000 }, want: { kind: 'dial_now' } },
    {
      name: 'connected, reset recently: cancel the redial, keep climbing',
      facts: { ...facts, sighting: 'connected', connected: true, lastResetAt: 9_000 },
      want: { kind: 'connected', reset: false },
    },
  ];
  for (const row of table) assert.deepEqual(seenAgain(row.facts, POLICY), row.want, row.name);
});

/** Lets A fail until its back-off is at the cap (4 s here); returns the time of its last dial. */
async function atTheCap(clock: ManualClock, fake: FakeDialer, dialer: PeerDialer): Promise<number> {
  dialer.setPeers([addrA]);
  await advance(clock, 20_000);
  return fake.dials.at(-1)!.at;
}

test('a bootstrap peer whose record arrives is dialled at once, not at the end of its back-off', async () => {
  const { clock, fake, dialer } = setup();
  const last = await atTheCap(clock, fake, dialer);
  const before = fake.dials.length;
  fake.up.add(A);
  await advance(clock, 100); // still well inside the 2-4 s back-off
  assert.ok(clock.now() - last < 2_000);
  dialer.peerSeen(A, 'message');
  await advance(clock, 50);
  assert.equal(fake.dials.length, before + 1, 'dialled on the sighting');
  assert.equal(fake.connected(A), true);
  dialer.stop();
});

test('a sighting restarts the back-off from the shortest delay, at most once per maxMs', async () => {
  const { clock, fake, dialer, failures } = setup();
  await atTheCap(clock, fake, dialer);
  dialer.peerSeen(A, 'message'); // up somewhere, but not reachable from here
  await advance(clock, 50);
  assert.equal(failures.at(-1), 500, 'the failed dial after a sighting waits the shortest delay');
  const dials = fake.dials.length;
  dialer.peerSeen(A, 'message'); // its next heartbeat: no second reset within maxMs
  await advance(clock, 50);
  assert.equal(fake.dials.length, dials);
  dialer.stop();
});

test('a bootstrap peer that dials in cancels the pending redial; its drop redials after the shortest delay', async () => {
  const { clock, fake, dialer } = setup();
  await atTheCap(clock, fake, dialer);
  fake.connectedPeers.add(A);
  dialer.peerSeen(A, 'connected');
  assert.equal(clock.pendingTimers(), 0, 'the pending redial is cancelled');
  const dials = fake.dials.length;
  await advance(clock, 1_000);
  assert.equal(fake.dials.length, dials, 'no dial while it is connected');
  // It drops after 1 s, well under maxMs: without the reset the redial would wait 2-4 s.
  fake.up.add(A);
  fake.connectedPeers.delete(A);
  dialer.peerDisconnected(A);
  const droppedAt = clock.now();
  await advance(clock, 1_000);
  assert.equal(fake.dials.length, dials + 1);
  assert.equal(fake.dials.at(-1)!.at - droppedAt, 500);
  dialer.stop();
});

test('a sighting of a peer that is not a bootstrap peer, or after stop, dials nothing', async () => {
  const { clock, fake, dialer } = setup();
  fake.up.add(A);
  dialer.setPeers([addrA]);
  await advance(clock, 100);
  dialer.peerSeen(B, 'message');
  dialer.peerSeen(B, 'connected');
  await advance(clock, 1_000);
  assert.deepEqual(
    fake.dials.map((d) => d.peer),
    [A],
  );
  dialer.stop();
  dialer.peerSeen(A, 'message');
  assert.equal(clock.pendingTimers(), 0);
});
