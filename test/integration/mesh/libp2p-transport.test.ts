// The libp2p + gossipsub MeshTransport with real sockets on 127.0.0.1 (port 0), three in one
// process: delivery across a relay, peer-joined, redial after a drop, the message-size bound,
// and a clean stop.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { fileURLToPath } from 'node:url';
import { generateKeyPair } from '@libp2p/crypto/keys';
import type { PrivateKey } from '@libp2p/interface';
import { systemClock } from '#src/core/clock.ts';
import { Libp2pTransport, type Libp2pTransportOptions } from '#src/mesh/gossip/libp2p-transport.ts';
import { eventually } from '#test/fixtures/http.ts';
import { onEmitter, untilEvent, type Trigger } from '#test/fixtures/events.ts';

const text = (data: Uint8Array): string => new TextDecoder().decode(data);
const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);

interface Site {
  readonly transport: Libp2pTransport;
  readonly got: { data: string; from: string }[];
  readonly joined: string[];
  readonly oversized: number[];
  /** A peer joined the sites topic here (after `joined` and the pubsub's subscribers took it in). */
  readonly joins: Trigger;
}

async function site(privateKey: PrivateKey, over: Partial<Libp2pTransportOptions> = {}): Promise<Site> {
  const got: Site['got'] = [];
  const joined: string[] = [];
  const oversized: number[] = [];
  const transport = new Libp2pTransport({
    privateKey,
    listen: ['/ip4/127.0.0.1/tcp/0'],
    peers: [],
    maxMessageBytes: 4_096,
    clock: systemClock,
    random: Math.random,
    redial: { baseMs: 100, maxMs: 1_000 },
    events: { oversized: (_peer, n) => oversized.push(n) },
    ...over,
  });
  transport.onMessage((data, from) => (got.push({ data: text(data), from }), 'accept'));
  const joins = new EventEmitter();
  transport.onPeerJoined((peer) => {
    joined.push(peer);
    joins.emit('joined');
  });
  await transport.start();
  return { transport, got, joined, oversized, joins: onEmitter(joins, 'peers joining', 'joined') };
}

const addr = (s: Site): string => s.transport.addresses()[0]!;

/** Publishes `message` from `from` until every one of `to` has it (gossipsub forms its mesh on its heartbeat). */
async function deliver(from: Site, to: readonly Site[], message: string, timeoutMs = 10_000): Promise<void> {
  await eventually(
    async () => {
      if (to.every((s) => s.got.some((g) => g.data === message))) return true;
      await from.transport.publish(bytes(message));
      await new Promise((r) => setTimeout(r, 200));
      return to.every((s) => s.got.some((g) => g.data === message));
    },
    timeoutMs,
    `"${message}" to reach ${to.length} site(s)`,
  );
}

test('a message published by one site reaches the others, through a relay, named by its signer', async () => {
  const b = await site(await generateKeyPair('Ed25519'));
  const a = await site(await generateKeyPair('Ed25519'), { peers: [addr(b)] });
  const c = await site(await generateKeyPair('Ed25519'), { peers: [addr(b)] });
  try {
    // A and C each know only B: what A publishes reaches C through B's gossipsub mesh.
    await deliver(a, [b, c], 'from-a');
    assert.ok(
      c.got.filter((g) => g.data === 'from-a').every((g) => g.from === a.transport.peerId()),
      'from = the signing peer, not the relay',
    );
    assert.equal(a.got.length, 0, 'no echo to self (emitSelf false)');
    await deliver(c, [a, b], 'from-c');
    // Peer joined fired on B for both dialers, and on each dialer for B.
    assert.ok(b.joined.includes(a.transport.peerId()!) && b.joined.includes(c.transport.peerId()!));
    assert.ok(a.joined.includes(b.transport.peerId()!));
    const stats = b.transport.stats();
    assert.equal(stats.peers, 2);
    assert.ok(stats.bytesSent > 0 && stats.bytesReceived > 0, JSON.stringify(stats));
  } finally {
    await Promise.all([a, b, c].map((s) => s.transport.stop()));
  }
});

test('publishing with no peer at all succeeds (allowPublishToZeroTopicPeers), and before start is a no-op', async () => {
  const key = await generateKeyPair('Ed25519');
  const lonely = new Libp2pTransport({
    privateKey: key,
    listen: ['/ip4/127.0.0.1/tcp/0'],
    peers: [],
    maxMessageBytes: 1_024,
    clock: systemClock,
    random: Math.random,
  });
  await lonely.publish(bytes('nobody'));
  await lonely.start();
  try {
    await lonely.publish(bytes('nobody listens'));
    assert.equal(lonely.stats().peers, 0);
    await assert.rejects(lonely.publish(new Uint8Array(1_025)), /1025 bytes is over max_message_bytes \(1024\)/);
  } finally {
    await lonely.stop();
  }
});

test('a dropped bootstrap peer is redialled when it comes back on its address, and joins again', async () => {
  const bKey = await generateKeyPair('Ed25519');
  let b = await site(bKey);
  const bAddr = addr(b);
  const a = await site(await generateKeyPair('Ed25519'), { peers: [bAddr] });
  try {
    await deliver(a, [b], 'before');
    await b.transport.stop();
    // Same key, same port: the site restarted. A redials it with back-off (here 100 ms → 1 s).
    const port = bAddr.split('/')[4];
    b = await site(bKey, { listen: [`/ip4/127.0.0.1/tcp/${port}`] });
    await untilEvent(() => a.transport.stats().peers === 1, [a.joins], 'A to redial B');
    assert.ok(b.joined.includes(a.transport.peerId()!), 'B saw A join');
    await deliver(a, [b], 'after');
  } finally {
    await Promise.all([a.transport.stop(), b.transport.stop()]);
  }
});

test('setPeers: a peer added by a reload is dialled', async () => {
  const b = await site(await generateKeyPair('Ed25519'));
  const a = await site(await generateKeyPair('Ed25519'));
  try {
    assert.equal(a.transport.stats().peers, 0);
    a.transport.setPeers([addr(b)]);
    await untilEvent(
      () => a.transport.stats().peers === 1 && b.joined.length === 1,
      [a.joins, b.joins],
      'A to dial B after setPeers',
    );
  } finally {
    await Promise.all([a.transport.stop(), b.transport.stop()]);
  }
});

test('a message over max_message_bytes is dropped before the handler and not relayed', async () => {
  // A's own bound is larger, as if A were misconfigured or hostile; B and C keep 1 KiB.
  const b = await site(await generateKeyPair('Ed25519'), { maxMessageBytes: 1_024 });
  const a = await site(await generateKeyPair('Ed25519'), { maxMessageBytes: 64 * 1_024, peers: [addr(b)] });
  const c = await site(await generateKeyPair('Ed25519'), { maxMessageBytes: 64 * 1_024, peers: [addr(b)] });
  try {
    await deliver(a, [b, c], 'small');
    const big = 'x'.repeat(2_000);
    await a.transport.publish(bytes(big));
    await deliver(a, [b, c], 'small again');
    assert.equal(
      b.got.some((g) => g.data === big),
      false,
      'B never handled it',
    );
    assert.deepEqual(b.oversized, [2_000]);
    // C allows 64 KiB but hears A only through B, which did not relay it.
    assert.equal(
      c.got.some((g) => g.data === big),
      false,
      'B did not relay it to C',
    );
  } finally {
    await Promise.all([a, b, c].map((s) => s.transport.stop()));
  }
});

test('stop() leaves no handles: a process that starts two transports, gossips and stops them exits by itself', async () => {
  const script = fileURLToPath(new URL('./transport-exit-script.ts', import.meta.url));
  const child = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const code = await new Promise<number | null>((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      resolve(null);
    }, 120_000);
    child.on('exit', (c) => {
      clearTimeout(timer);
      resolve(c);
    });
  });
  assert.equal(code, 0, `the process did not exit cleanly by itself within 120 s: ${out}`);
  assert.match(out, /delivered/);
});

test('a handler that throws is contained and reported; the other handlers still get the message', async () => {
  const failures: unknown[] = [];
  const connected: string[] = [];
  const b = await site(await generateKeyPair('Ed25519'), {
    events: { handlerFailed: (e) => failures.push(e), connected: (p) => connected.push(p) },
  });
  b.transport.onMessage(() => {
    throw new Error('handler bug');
  });
  const later: string[] = [];
  b.transport.onMessage((data) => (later.push(text(data)), 'accept'));
  const a = await site(await generateKeyPair('Ed25519'), { peers: [addr(b)] });
  try {
    await deliver(a, [b], 'boom');
    assert.ok(later.includes('boom'));
    assert.ok(failures.length >= 1 && failures[0] instanceof Error && failures[0].message === 'handler bug');
    assert.deepEqual(connected, [a.transport.peerId()]);
  } finally {
    await Promise.all([a.transport.stop(), b.transport.stop()]);
  }
});

test('a listen address that cannot be used fails start() with an error naming [mesh] listen and the cause', async () => {
  const a = await site(await generateKeyPair('Ed25519'));
  const port = addr(a).split('/')[4];
  const taken = new Libp2pTransport({
    privateKey: await generateKeyPair('Ed25519'),
    listen: [`/ip4/127.0.0.1/tcp/${port}`],
    peers: [],
    maxMessageBytes: 1_024,
    clock: systemClock,
    random: Math.random,
  });
  const bad = new Libp2pTransport({
    privateKey: await generateKeyPair('Ed25519'),
    listen: ['/ip4/nonsense/tcp/1'],
    peers: [],
    maxMessageBytes: 1_024,
    clock: systemClock,
    random: Math.random,
  });
  try {
    await assert.rejects(taken.start(), (error: Error) => {
      assert.match(error.message, new RegExp(`^\\[mesh\\] listen \\["/ip4/127.0.0.1/tcp/${port}"\\]: .*EADDRINUSE`));
      assert.doesNotMatch(error.message, /faultTolerance/, 'no libp2p option advice');
      return true;
    });
    await assert.rejects(bad.start(), /^Error: \[mesh\] listen \["\/ip4\/nonsense\/tcp\/1"\]: .*nonsense/);
  } finally {
    await Promise.all([a.transport.stop(), taken.stop(), bad.stop()]);
  }
});
