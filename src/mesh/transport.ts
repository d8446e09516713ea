// How a site's gossip leaves and arrives: one topic (SITES_TOPIC), opaque message bytes. The mesh
// service never sees libp2p; production plugs in the gossipsub transport, tests the in-memory bus
// (memory-transport.ts). Like memberlist's Transport plus mock_transport.go.

export interface MeshTransportStats {
  /** Peers connected now. */
  readonly peers: number;
  /** Message bytes published by this site (its own messages, not relayed ones). */
  readonly bytesSent: number;
  /** Message bytes delivered to this site. */
  readonly bytesReceived: number;
}

/**
 * What the judge says of one message, and so what the transport does with it (gossipsub's
 * validation results): `accept` = delivered and relayed; `reject` = neither, and the peer that
 * passed it on is penalised (gossipsub's score: enough rejections and its traffic is ignored);
 * `ignore` = neither, without a penalty (a replay, or a message that is merely unhelpful).
 */
export type MessageVerdict = 'accept' | 'reject' | 'ignore';

/**
 * Which peers a transport keeps connected and how much it hears from each (the mesh service sets
 * it from `[mesh]`, and again on every reload).
 */
export interface PeerAdmission {
  /**
   * The peer ids kept connected: every pinned site (a site's peer id is its key), `[mesh]
   * allowed_peers` and the peers `[mesh] peers` names. A connection with any other peer is refused
   * or closed. Undefined = every peer (a transport tested on its own).
   */
  readonly peers: ReadonlySet<string> | undefined;
  /** Messages judged per peer (the one that passed them on) per second; more are ignored unjudged. */
  readonly maxMessagesPerSecond: number;
}

export interface MeshTransport {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Publishes on the sites topic; never throws because no peer is there to hear it. */
  publish(data: Uint8Array): Promise<void>;
  /**
   * The judging port: every message another peer published (never this site's own) goes to
   * `judge` before it is delivered anywhere or relayed; `fromPeer` is the peer that signed it
   * (its author, not the relay). Only a message judged `accept` is relayed to other peers.
   */
  onMessage(judge: (data: Uint8Array, fromPeer: string) => MessageVerdict): void;
  /** Which peers are kept connected and heard; replaced on reload. */
  admit(admission: PeerAdmission): void;
  /** A peer joined the topic (a new site, or one back after a partition). */
  onPeerJoined(handler: (peer: string) => void): void;
  /** The bootstrap peers (multiaddrs), replaced on reload. */
  setPeers(addrs: readonly string[]): void;
  stats(): MeshTransportStats;
}

/** What builds a site's transport (options.meshTransport in the gateway): libp2p in production. */
export type MeshTransportFactory = (site: {
  readonly site: string;
  readonly peerId: string;
  readonly listen: readonly string[];
  readonly peers: readonly string[];
}) => MeshTransport;
