// Spawned by libp2p-transport.test.ts: two transports gossip one message and stop. The process
// must then exit by itself (no socket, server or ref'd timer left); it never calls process.exit.

import { generateKeyPair } from '@libp2p/crypto/keys';
import { systemClock } from '#src/core/clock.ts';
import { Libp2pTransport } from '#src/mesh/gossip/libp2p-transport.ts';

const make = async (peers: string[]): Promise<Libp2pTransport> => {
  const t = new Libp2pTransport({
    privateKey: await generateKeyPair('Ed25519'),
    listen: ['/ip4/127.0.0.1/tcp/0'],
    peers,
    maxMessageBytes: 4_096,
    clock: systemClock,
    random: Math.random,
  });
  await t.start();
  return t;
};

const b = await make([]);
const a = await make([b.addresses()[0]!]);
const delivered = new Promise<void>((resolve) => b.onMessage(() => (resolve(), 'accept')));
const publishing = setInterval(() => void a.publish(new TextEncoder().encode('hello')), 100);
await delivered;
clearInterval(publishing);
console.log('delivered');
// A dial still pending (a peer that never answers) must not hold the process either.
a.setPeers([b.addresses()[0]!, '/ip4/127.0.0.1/tcp/9/p2p/12D3KooWFgMjaskj9ud8bnG2BpXLvN6YwCgqBr9fVUXa7r3vu8uY']);
await a.stop();
await b.stop();
