// Issue 20, item 8: on a cold start, sites started first had backed off toward 30 s redialling the
// bootstrap peers that were not up yet, so 32 sites took 48 s to converge after the last one
// started (48 sites: 98 s). A bootstrap peer that shows it is up — its record arrives relayed by
// other sites, or it dials in — is now dialled at once and its back-off starts again from 0.5 s.
// The dialer with the production back-off policy, an injected clock and a fake network.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '#src/core/clock.ts';
import { DEFAULT_REDIAL } from '#src/mesh/gossip/backoff.ts';
import { PeerDialer, type DialTarget, type Dialer } from '#src/mesh/gossip/peer-dialer.ts';

const A = '12D3KooWFgMjaskj9ud8bnG2BpXLvN6YwCgqBr9fVUXa7r3vu8uY';
const B = '12D3KooWJg5PpbSKkEfjEypKwXn5XA2bVWHxzP1kijoy2ZhXDUhB';
const addr = (peer: string, port: number): string => `/ip4/127.0.0.1/tcp/${port}/p2p/${peer}`;
/** The bound of the issue: three heartbeats (of the benchmark's 2 s). */
const THREE_HEARTBEATS_MS = 6_000;

class FakeNetwork implements Dialer {
  readonly up = new Set<string>();
  readonly open = new Set<string>();
  readonly dials: { peer: string; at: number }[] = [];
  readonly #clock: ManualClock;
  constructor(clock: ManualClock) {
    this.#clock = clock;
  }
  async dial(target: DialTarget): Promise<void> {
    this.dials.push({ peer: target.peerId, at: this.#clock.now() });
    if (!this.up.has(target.peerId)) throw new Error('connect ECONNREFUSED');
    this.open.add(target.peerId);
  }
  connected(peerId: string): boolean {
    return this.open.has(peerId);
  }
}

async function advance(clock: ManualClock, ms: number): Promise<void> {
  for (let t = 0; t < ms; t += 50) {
    clock.advance(50);
    await new Promise((r) => setImmediate(r));
  }
}

function coldStart(): { clock: ManualClock; net: FakeNetwork; dialer: PeerDialer } {
  const clock = new ManualClock(0);
  const net = new FakeNetwork(clock);
  // The longest draw of the jitter: every back-off at the top of its range.
  const dialer = new PeerDialer({ dialer: net, clock, random: () => 0.999, policy: DEFAULT_REDIAL });
  dialer.setPeers([addr(A, 4001), addr(B, 4002)]);
  return { clock, net, dialer };
}

test('a bootstrap peer that comes up late is dialled as soon as its record arrives, not when a 30 s back-off runs out', async () => {
  const { clock, net, dialer } = coldStart();
  await advance(clock, 120_000); // A and B start two minutes after this site: its redials are at the cap
  // A comes up one second after a failed redial, so the next one is 15-30 s away.
  const failed = net.dials.filter((d) => d.peer === A).length;
  while (net.dials.filter((d) => d.peer === A).length === failed) await advance(clock, 50);
  await advance(clock, 1_000);
  net.up.add(A);
  const upAt = clock.now();
  dialer.peerSeen(A, 'message'); // A's first record, relayed by a site A dialled
  for (let waited = 0; !net.connected(A) && waited < 60_000; waited += 50) await advance(clock, 50);
  assert.ok(net.connected(A), 'A is connected');
  const took = net.dials.filter((d) => d.peer === A).at(-1)!.at - upAt;
  assert.ok(took <= THREE_HEARTBEATS_MS, `A dialled ${took} ms after it was seen (within three heartbeats)`);
  dialer.stop();
});

test('a bootstrap peer that dials in restarts its back-off: when that connection drops, it is redialled after 0.5 s, not 30 s', async () => {
  const { clock, net, dialer } = coldStart();
  await advance(clock, 120_000);
  net.up.add(B);
  net.open.add(B); // B dialled this site
  dialer.peerSeen(B, 'connected');
  await advance(clock, 2_000);
  net.open.delete(B); // and dropped two seconds later (B restarting, say)
  dialer.peerDisconnected(B);
  const droppedAt = clock.now();
  const before = net.dials.filter((d) => d.peer === B).length;
  for (let waited = 0; net.dials.filter((d) => d.peer === B).length === before && waited < 60_000; waited += 50)
    await advance(clock, 50);
  const redial = net.dials.filter((d) => d.peer === B).at(-1)!.at - droppedAt;
  assert.ok(redial <= DEFAULT_REDIAL.baseMs, `B redialled ${redial} ms after the drop`);
  dialer.stop();
});
