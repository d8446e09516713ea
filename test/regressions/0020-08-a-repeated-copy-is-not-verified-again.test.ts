// Issue 20, item 8: 32 sites on a 2-core machine did not converge within three heartbeats of the
// last one starting; the gateways were CPU-bound. The largest single cost of a site was
// gossipsub's signature check: it verified the Ed25519 signature of every copy of a message (each
// record reaches a site once from each mesh peer, about four copies in a 12-site mesh) before its
// seen cache dropped the repeats. Now a copy byte-identical to one already verified is dropped
// first (gossipsub's fastMsgIdFn): one signature check per message per site.
//
// Real libp2p transports on 127.0.0.1, four of them, each connected to every other, so every
// message from A reaches B, C and D directly and again through each of the other two.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { generateKeyPair } from '@libp2p/crypto/keys';
import type { PrivateKey } from '@libp2p/interface';
import { systemClock } from '#src/core/clock.ts';
import { Libp2pTransport } from '#src/mesh/gossip/libp2p-transport.ts';
import { eventually } from '#test/fixtures/http.ts';
import { untilEvent, type Trigger } from '#test/fixtures/events.ts';
import { tapJudgements } from '#test/fixtures/gateway-waits.ts';

const text = (data: Uint8Array): string => new TextDecoder().decode(data);
const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);

interface Node {
  readonly transport: Libp2pTransport;
  readonly judged: string[];
  /** After each message judged here (`judged` has it). */
  readonly judgements: Trigger;
}

async function node(key: PrivateKey, peers: readonly string[]): Promise<Node> {
  const judged: string[] = [];
  const transport = new Libp2pTransport({
    privateKey: key,
    listen: ['/ip4/127.0.0.1/tcp/0'],
    peers,
    maxMessageBytes: 4_096,
    clock: systemClock,
    random: Math.random,
    redial: { baseMs: 100, maxMs: 1_000 },
  });
  const { judged: judgements } = tapJudgements(transport);
  transport.onMessage((data) => {
    judged.push(text(data));
    return 'accept';
  });
  await transport.start();
  return { transport, judged, judgements };
}

const addr = (n: Node): string => n.transport.addresses()[0] ?? assert.fail('no address');

test('each site checks the signature of a message once, however many copies of it arrive', { timeout: 90_000 }, async () => {
  const keys = await Promise.all([0, 1, 2, 3].map(() => generateKeyPair('Ed25519')));
  const a = await node(keys[0]!, []);
  const b = await node(keys[1]!, [addr(a)]);
  const c = await node(keys[2]!, [addr(a), addr(b)]);
  const d = await node(keys[3]!, [addr(a), addr(b), addr(c)]);
  const all = [a, b, c, d];
  const receivers = [b, c, d];
  // gossipsub (through @libp2p/crypto) verifies with the default export of node:crypto; count the
  // checks of envelopes whose data is one of A's test messages.
  const original = crypto.verify;
  const checks = { count: 0 };
  const counting = ((...args: Parameters<typeof crypto.verify>) => {
    const data = args[1];
    if (Buffer.from(data.buffer, data.byteOffset, data.byteLength).includes('copy-test-')) checks.count += 1;
    return original(...args);
  }) as typeof crypto.verify;
  try {
    // The mesh is up once a message from each node has reached every other (gossipsub grafts on its heartbeat).
    await eventually(
      async () => {
        for (const n of all) await n.transport.publish(bytes(`warm-${all.indexOf(n)}-${Date.now()}`));
        await new Promise((r) => setTimeout(r, 300));
        return all.every((_, i) => all.every((m, j) => i === j || m.judged.some((x) => x.startsWith(`warm-${i}-`))));
      },
      30_000,
      'every node to hear every other',
    );
    crypto.verify = counting;
    const messages = Array.from({ length: 10 }, (_, i) => `copy-test-${i}`);
    for (const m of messages) await a.transport.publish(bytes(m));
    await untilEvent(
      () => receivers.every((r) => messages.every((m) => r.judged.includes(m))),
      receivers.map((r) => r.judgements),
      "A's messages to reach B, C and D",
    );
    // Every relayed copy has arrived once each relay's own later message has reached every other
    // node (a peer's messages to another travel in order on one stream).
    for (const n of receivers) await n.transport.publish(bytes(`after-${all.indexOf(n)}`));
    await untilEvent(
      () => receivers.every((n, i) => receivers.every((m, j) => i === j || m.judged.includes(`after-${all.indexOf(n)}`))),
      receivers.map((r) => r.judgements),
      'the markers to arrive',
    );
    crypto.verify = original;
    assert.ok(checks.count > 0, 'the counter saw gossipsub check signatures');
    // Once per message per site; a copy that arrives while the first is still being checked is
    // checked too (only a verified copy enters the fast-id cache, so a forgery cannot shadow the
    // real one), which a busy machine makes happen now and then. Before: every copy, 3 per site.
    const once = messages.length * receivers.length;
    const shown = `${checks.count} signature checks for ${messages.length} messages at ${receivers.length} sites`;
    assert.ok(checks.count >= once, shown);
    assert.ok(checks.count < 2 * once, `${shown}: fewer than two per message per site (every copy checked would be 3)`);
  } finally {
    crypto.verify = original;
    await Promise.all(all.map((n) => n.transport.stop()));
  }
});
