// How the mesh service talks to other sites: publish bytes on the sites topic, hear what others
// publish, learn when a peer joins. The gossip engine (libp2p + gossipsub) and the in-memory bus
// used in tests both implement it. (mesh-state owns this file; this copy carries the agreed text.)

export interface MeshTransport {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Never throws for "no peers subscribed". */
  publish(data: Uint8Array): Promise<void>;
  onMessage(handler: (data: Uint8Array, fromPeer: string) => void): void;
  onPeerJoined(handler: (peer: string) => void): void;
  setPeers(addrs: readonly string[]): void;
  stats(): { readonly peers: number; readonly bytesSent: number; readonly bytesReceived: number };
}
