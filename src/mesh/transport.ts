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

export interface MeshTransport {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Publishes on the sites topic; never throws because no peer is there to hear it. */
  publish(data: Uint8Array): Promise<void>;
  /** Every message another site published (never this site's own). */
  onMessage(handler: (data: Uint8Array, fromPeer: string) => void): void;
  /** A peer joined the topic (a new site, or one back after a partition). */
  onPeerJoined(handler: (peer: string) => void): void;
  /** The bootstrap peers (multiaddrs), replaced on reload. */
  setPeers(addrs: readonly string[]): void;
  stats(): MeshTransportStats;
}

/** What builds a site's transport (options.meshTransport in the gateway): libp2p in production. */
export type MeshTransportFactory = (site: { readonly site: string; readonly peerId: string; readonly listen: readonly string[]; readonly peers: readonly string[] }) => MeshTransport;
