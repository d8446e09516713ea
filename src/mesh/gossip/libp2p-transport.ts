// The MeshTransport on a real gossip engine: libp2p v3 over TCP, Noise, Yamux, with
// @libp2p/gossipsub on the sites topic. We add only what gossipsub leaves to the application:
// keeping the bootstrap peers dialled (peer-dialer.ts), a bound on message size, the peer-joined
// signal, and byte counts. Records are judged by the mesh service, not here: the transport moves
// bytes and names the libp2p peer that signed them (StrictSign makes that name trustworthy).

import { createLibp2p, type Libp2p } from 'libp2p';
import { tcp } from '@libp2p/tcp';
import { noise } from '@chainsafe/libp2p-noise';
import { yamux } from '@chainsafe/libp2p-yamux';
import { identify } from '@libp2p/identify';
import { gossipsub, TopicValidatorResult, type GossipSub } from '@libp2p/gossipsub';
import { peerIdFromString } from '@libp2p/peer-id';
import { multiaddr } from '@multiformats/multiaddr';
import type { PrivateKey } from '@libp2p/interface';
import type { Clock } from '../../core/clock.ts';
import { SITES_TOPIC } from '../site-record.ts';
import type { MeshTransport } from '../transport.ts';
import { ByteMeter } from './byte-meter.ts';
import { DEFAULT_REDIAL, type BackoffPolicy } from './backoff.ts';
import { PeerDialer, type DialerEvents, type DialTarget } from './peer-dialer.ts';

export interface TransportEvents extends DialerEvents {
  /** A message over `maxMessageBytes` was dropped (not delivered, not relayed). */
  oversized?(fromPeer: string, bytes: number): void;
  /** The first connection to a peer opened / the last one closed (for logs; gossip is not yet set up). */
  connected?(peer: string): void;
  disconnected?(peer: string): void;
  /** A message or peer-joined handler threw; the error is contained here, never crashes the process. */
  handlerFailed?(error: unknown): void;
}

export interface Libp2pTransportOptions {
  /** The site's Ed25519 key as libp2p wants it (mesh-trust's `libp2pPrivateKey(siteKey)`). */
  readonly privateKey: PrivateKey;
  /** `[mesh] listen` multiaddrs; port 0 picks a free port (see `addresses()`). */
  readonly listen: readonly string[];
  /** `[mesh] peers`: bootstrap multiaddrs ending in /p2p/<peer id>. */
  readonly peers: readonly string[];
  /** `[mesh] max_message_bytes`: larger messages are neither delivered nor relayed, nor sent. */
  readonly maxMessageBytes: number;
  readonly clock: Clock;
  readonly random: () => number;
  readonly redial?: BackoffPolicy;
  /** How long one dial may take before it counts as failed (default 10 s). */
  readonly dialTimeoutMs?: number;
  readonly events?: TransportEvents;
}

/**
 * One RPC frame may carry several messages (an IWANT answer batches them) plus control entries,
 * so the frame bound is a multiple of the message bound; the per-message bound is the validator's.
 */
function frameLimit(maxMessageBytes: number): number {
  return maxMessageBytes * 8 + 64 * 1024;
}

/** The line of a libp2p start error that names the problem (its message also suggests libp2p options). */
function listenProblem(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  const lines = text.split('\n').map((l) => l.trim());
  return lines.find((l) => / Error: /.test(l)) ?? lines[0] ?? text;
}

type Node = Libp2p<{ pubsub: GossipSub; identify: ReturnType<ReturnType<typeof identify>> }>;

export class Libp2pTransport implements MeshTransport {
  readonly #opts: Libp2pTransportOptions;
  readonly #meter = new ByteMeter();
  readonly #messageHandlers: ((data: Uint8Array, fromPeer: string) => void)[] = [];
  readonly #joinHandlers: ((peer: string) => void)[] = [];
  #node: Node | undefined;
  #dialer: PeerDialer | undefined;
  #peers: readonly string[];
  #stopped = false;

  constructor(opts: Libp2pTransportOptions) {
    this.#opts = opts;
    this.#peers = opts.peers;
  }

  async start(): Promise<void> {
    if (this.#node !== undefined || this.#stopped) return;
    const opts = this.#opts;
    const node = await this.#create().catch((error: unknown) => {
      throw new Error(`[mesh] listen ${JSON.stringify(opts.listen)}: ${listenProblem(error)}`, { cause: error });
    });
    this.#node = node;
    const pubsub = node.services.pubsub;
    pubsub.topicValidators.set(SITES_TOPIC, (peer, message) => {
      if (message.data.byteLength <= opts.maxMessageBytes) return TopicValidatorResult.Accept;
      opts.events?.oversized?.(peer.toString(), message.data.byteLength);
      return TopicValidatorResult.Reject;
    });
    pubsub.addEventListener('message', (event) => {
      const message = event.detail;
      if (message.topic !== SITES_TOPIC || message.type !== 'signed') return;
      const from = message.from.toString();
      for (const handler of this.#messageHandlers) this.#call(() => handler(message.data, from));
    });
    pubsub.addEventListener('subscription-change', (event) => {
      const joined = event.detail.subscriptions.some((s) => s.topic === SITES_TOPIC && s.subscribe);
      if (!joined) return;
      const peer = event.detail.peerId.toString();
      for (const handler of this.#joinHandlers) this.#call(() => handler(peer));
    });
    pubsub.subscribe(SITES_TOPIC);
    const dialer = new PeerDialer({
      dialer: {
        dial: async (target: DialTarget, signal: AbortSignal) => {
          await node.dial(multiaddr(target.addr), { signal });
        },
        connected: (peerId: string) => node.getConnections(peerIdFromString(peerId)).length > 0,
      },
      clock: opts.clock,
      random: opts.random,
      policy: opts.redial ?? DEFAULT_REDIAL,
      ...(opts.events === undefined ? {} : { events: opts.events }),
    });
    this.#dialer = dialer;
    node.addEventListener('peer:connect', (event) => opts.events?.connected?.(event.detail.toString()));
    // A bootstrap peer seen again (it connected, or a record it signed was relayed to us) is dialled
    // now, not when its back-off runs out (#20 item 8). 'message' fires only for accepted messages.
    node.addEventListener('peer:connect', (event) => this.#call(() => dialer.peerSeen(event.detail.toString(), 'connected')));
    pubsub.addEventListener('message', (event) => {
      const message = event.detail;
      if (message.type === 'signed') this.#call(() => dialer.peerSeen(message.from.toString(), 'message'));
    });
    node.addEventListener('peer:disconnect', (event) => {
      const peer = event.detail.toString();
      opts.events?.disconnected?.(peer);
      dialer.peerDisconnected(peer);
    });
    dialer.setPeers(this.#peers);
  }

  #create(): Promise<Node> {
    const opts = this.#opts;
    return createLibp2p({
      privateKey: opts.privateKey,
      addresses: { listen: [...opts.listen] },
      transports: [tcp()],
      connectionEncrypters: [noise()],
      streamMuxers: [yamux()],
      connectionManager: { dialTimeout: opts.dialTimeoutMs ?? 10_000 },
      services: {
        identify: identify(),
        pubsub: gossipsub({
          // Records are signed by the site key, and so are the gossipsub envelopes (the same key):
          // a message's `from` is the libp2p peer that really sent it.
          globalSignaturePolicy: 'StrictSign',
          // A site publishes whether or not anyone listens yet; heartbeats reach late joiners.
          allowPublishToZeroTopicPeers: true,
          emitSelf: false,
          // Identical bytes twice (e.g. a "want" repeated within the seen-cache window) are a no-op,
          // not an error: records themselves always differ, their revision rises.
          ignoreDuplicatePublishError: true,
          // Own records go to every connected subscriber, not only the D mesh peers: meshes here are
          // small (tens of sites), records are small, and a change should arrive in one hop.
          floodPublish: true,
          // Heartbeat interval and D/Dlo/Dhi stay at gossipsub's defaults (1 s; 6/4/12).
          allowedTopics: [SITES_TOPIC],
          maxInboundDataLength: frameLimit(opts.maxMessageBytes),
          metricsRegister: this.#meter.register(),
          metricsTopicStrToLabel: new Map([[SITES_TOPIC, 'sites']]),
        }),
      },
    });
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#dialer?.stop();
    const node = this.#node;
    this.#node = undefined;
    if (node !== undefined) await node.stop();
  }

  async publish(data: Uint8Array): Promise<void> {
    if (data.byteLength > this.#opts.maxMessageBytes) {
      throw new RangeError(`mesh message of ${data.byteLength} bytes is over max_message_bytes (${this.#opts.maxMessageBytes})`);
    }
    const node = this.#node;
    if (node === undefined) return;
    await node.services.pubsub.publish(SITES_TOPIC, data);
  }

  onMessage(handler: (data: Uint8Array, fromPeer: string) => void): void {
    this.#messageHandlers.push(handler);
  }

  onPeerJoined(handler: (peer: string) => void): void {
    this.#joinHandlers.push(handler);
  }

  setPeers(addrs: readonly string[]): void {
    this.#peers = [...addrs];
    this.#dialer?.setPeers(this.#peers);
  }

  stats(): { readonly peers: number; readonly bytesSent: number; readonly bytesReceived: number } {
    const peers = this.#node?.services.pubsub.getSubscribers(SITES_TOPIC).length ?? 0;
    return { peers, ...this.#meter.counts() };
  }

  /** An exception thrown from a listener of a libp2p event would end the process (EventTarget rethrows it). */
  #call(fn: () => void): void {
    try {
      fn();
    } catch (error) {
      this.#opts.events?.handlerFailed?.(error);
    }
  }

  /** This site's libp2p peer id (the base58btc string `[mesh] peers` entries end in). */
  peerId(): string | undefined {
    return this.#node?.peerId.toString();
  }

  /** The addresses actually listened on, each ending in /p2p/<peer id> (port 0 resolved). */
  addresses(): readonly string[] {
    return this.#node?.getMultiaddrs().map((a) => a.toString()) ?? [];
  }
}
