// The MeshTransport on a real gossip engine: libp2p v3 over TCP, Noise, Yamux, with
// @libp2p/gossipsub on the sites topic. We add only what gossipsub leaves to the application:
// keeping the bootstrap peers dialled (peer-dialer.ts), judging each message in the topic
// validator before it is delivered or relayed (the mesh service's judge; a rejection lowers the
// relaying peer's gossipsub score until its traffic is ignored), a bound on message size and on
// messages per peer per second, a connection gater that keeps only admitted peers connected, the
// peer-joined signal, and byte counts. `fromPeer` is the libp2p peer that signed the message
// (StrictSign makes that name trustworthy).

import { createLibp2p, type Libp2p } from 'libp2p';
import { tcp } from '@libp2p/tcp';
import { noise } from '@chainsafe/libp2p-noise';
import { yamux } from '@chainsafe/libp2p-yamux';
import { identify } from '@libp2p/identify';
import { TopicValidatorResult, type GossipSub } from '@libp2p/gossipsub';
import { peerIdFromString } from '@libp2p/peer-id';
import { multiaddr } from '@multiformats/multiaddr';
import type { PrivateKey } from '@libp2p/interface';
import type { Clock } from '../../core/clock.ts';
import { SITES_TOPIC } from '../site-record.ts';
import type { MeshTransport, MessageVerdict, PeerAdmission } from '../transport.ts';
import { PeerRate } from '../peer-rate.ts';
import { worstVerdict } from '../verdict.ts';
import { ByteMeter } from './byte-meter.ts';
import { RESULT, sitesGossipsub } from './sites-gossipsub.ts';
import { DEFAULT_REDIAL, type BackoffPolicy } from './backoff.ts';
import { PeerDialer, type DialerEvents, type DialTarget } from './peer-dialer.ts';

export interface TransportEvents extends DialerEvents {
  /** A message over `maxMessageBytes` was dropped (not delivered, not relayed). */
  oversized?(fromPeer: string, bytes: number): void;
  /** A peer passed on more than `maxMessagesPerSecond`: the rest of that second is dropped unjudged (past twice the bound, rejected). */
  throttled?(viaPeer: string): void;
  /** A connection with a peer that is not admitted was refused or closed. */
  refused?(peer: string): void;
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
  /** Which peers are kept connected and how many messages each may pass on per second (admit() replaces it). */
  readonly admission?: PeerAdmission;
  readonly clock: Clock;
  readonly random: () => number;
  readonly redial?: BackoffPolicy;
  /** How long one dial may take before it counts as failed (default 10 s). */
  readonly dialTimeoutMs?: number;
  readonly events?: TransportEvents;
}

/**
 * How long libp2p's connection monitor waits for a ping's answer before it closes the connection as
 * dead (its default is 5 s). A site's liveness is judged by its records' freshness, not by pings;
 * the ping only finds connections nobody closed (a host gone without a FIN). A gateway starved of
 * CPU stalls for seconds: with 32 sites on a 2-core machine the 5 s default closed live
 * connections every few minutes, and each drop cost a redial, a new gossipsub mesh and full records
 * (#20 item 8). 30 s is the longest redial back-off: a dead connection is found about as fast as
 * a redial of it would be tried.
 */
export const PING_TIMEOUT_MS = 30_000;

/** What the transport does before anything calls admit(): every peer, and no bound a site would reach. */
const OPEN_ADMISSION: PeerAdmission = Object.freeze({ peers: undefined, maxMessagesPerSecond: 100_000 });

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
  readonly #judges: ((data: Uint8Array, fromPeer: string) => MessageVerdict)[] = [];
  readonly #joinHandlers: ((peer: string) => void)[] = [];
  #node: Node | undefined;
  #dialer: PeerDialer | undefined;
  #peers: readonly string[];
  #stopped = false;
  #admission: PeerAdmission;
  readonly #rate: PeerRate;

  constructor(opts: Libp2pTransportOptions) {
    this.#opts = opts;
    this.#peers = opts.peers;
    this.#admission = opts.admission ?? OPEN_ADMISSION;
    this.#rate = new PeerRate(this.#admission.maxMessagesPerSecond);
  }

  async start(): Promise<void> {
    if (this.#node !== undefined || this.#stopped) return;
    const opts = this.#opts;
    const node = await this.#create().catch((error: unknown) => {
      throw new Error(`[mesh] listen ${JSON.stringify(opts.listen)}: ${listenProblem(error)}`, { cause: error });
    });
    this.#node = node;
    const pubsub = node.services.pubsub;
    // The validator is the only delivery: gossipsub calls it once per message (its seen cache
    // drops repeats first), and relays the message only on Accept.
    pubsub.topicValidators.set(SITES_TOPIC, (peer, message) => {
      const via = peer.toString();
      if (message.type !== 'signed') return TopicValidatorResult.Reject;
      const rate = this.#rate.verdict(via, opts.clock.monotonicMs());
      if (rate !== 'judge') {
        opts.events?.throttled?.(via);
        return rate === 'reject' ? TopicValidatorResult.Reject : TopicValidatorResult.Ignore;
      }
      if (message.data.byteLength > opts.maxMessageBytes) {
        opts.events?.oversized?.(via, message.data.byteLength);
        return TopicValidatorResult.Reject;
      }
      const from = message.from.toString();
      return RESULT[worstVerdict(this.#judges.map((judge) => this.#judge(() => judge(message.data, from))))];
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
      this.#rate.forget(peer);
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
      connectionMonitor: { pingTimeout: { minTimeout: PING_TIMEOUT_MS, maxTimeout: 2 * PING_TIMEOUT_MS } },
      // Only admitted peers stay connected: the check runs once Noise has proved the peer's id.
      connectionGater: {
        denyInboundEncryptedConnection: (peerId) => this.#refuses(peerId.toString()),
        denyOutboundEncryptedConnection: (peerId) => this.#refuses(peerId.toString()),
      },
      services: {
        identify: identify(),
        pubsub: sitesGossipsub(opts.maxMessageBytes, this.#meter),
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

  onMessage(judge: (data: Uint8Array, fromPeer: string) => MessageVerdict): void {
    this.#judges.push(judge);
  }

  /** Replaces the admission; a connected peer no longer admitted is hung up on. */
  admit(admission: PeerAdmission): void {
    this.#admission = admission;
    this.#rate.setLimit(admission.maxMessagesPerSecond);
    const node = this.#node;
    if (node === undefined) return;
    for (const connection of node.getConnections()) {
      const peer = connection.remotePeer;
      if (this.#refuses(peer.toString())) void node.hangUp(peer).catch(() => undefined);
    }
  }

  #refuses(peer: string): boolean {
    const admitted = this.#admission.peers;
    if (admitted === undefined || admitted.has(peer)) return false;
    this.#opts.events?.refused?.(peer);
    return true;
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

  /** A judge that throws has judged nothing: the message is ignored (not relayed, no penalty). */
  #judge(fn: () => MessageVerdict): MessageVerdict {
    try {
      return fn();
    } catch (error) {
      this.#opts.events?.handlerFailed?.(error);
      return 'ignore';
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
