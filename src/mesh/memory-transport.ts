// An in-process gossip bus for tests: every started transport on one bus hears every other one,
// unless a partition separates them. Delivery is asynchronous (a microtask), like a network, and
// byte counters follow the MeshTransport contract.

import type { MeshTransport, MeshTransportStats } from './transport.ts';

/** Connects the memory transports of several in-process sites. */
export class MemoryBus {
  readonly #members = new Map<string, MemoryTransport>();
  /** Peer → its partition group; peers in different groups do not hear each other. */
  readonly #groups = new Map<string, number>();

  /** A transport for `peer` on this bus (not connected until started). */
  transport(peer: string): MemoryTransport {
    return new MemoryTransport(peer, this);
  }

  /** Splits the bus: each list is one side; peers not listed stay together in a side of their own. */
  partition(...sides: readonly (readonly string[])[]): void {
    this.#groups.clear();
    sides.forEach((side, i) => {
      for (const peer of side) this.#groups.set(peer, i + 1);
    });
  }

  /** Ends every partition: peers that see each other again are told so, as libp2p would. */
  heal(): void {
    const before = [...this.#members.keys()];
    const apart = new Set(before.flatMap((a) => before.filter((b) => a < b && !this.#connected(a, b)).map((b) => `${a}\n${b}`)));
    this.#groups.clear();
    for (const pair of apart) {
      const [a, b] = pair.split('\n') as [string, string];
      this.#members.get(a)?.joined(b);
      this.#members.get(b)?.joined(a);
    }
  }

  join(member: MemoryTransport): void {
    for (const other of this.#members.values()) {
      if (!this.#connected(member.peer, other.peer)) continue;
      other.joined(member.peer);
      member.joined(other.peer);
    }
    this.#members.set(member.peer, member);
  }

  leave(member: MemoryTransport): void {
    this.#members.delete(member.peer);
  }

  /** Delivers `data` to every connected member but the sender; answers how many got it. */
  deliver(from: string, data: Uint8Array): number {
    let heard = 0;
    for (const other of this.#members.values()) {
      if (other.peer === from || !this.#connected(from, other.peer)) continue;
      heard += 1;
      const copy = data.slice();
      queueMicrotask(() => other.receive(copy, from));
    }
    return heard;
  }

  peersOf(peer: string): number {
    return [...this.#members.keys()].filter((p) => p !== peer && this.#connected(peer, p)).length;
  }

  #connected(a: string, b: string): boolean {
    return (this.#groups.get(a) ?? 0) === (this.#groups.get(b) ?? 0);
  }
}

export class MemoryTransport implements MeshTransport {
  readonly peer: string;
  readonly #bus: MemoryBus;
  readonly #messageHandlers: ((data: Uint8Array, fromPeer: string) => void)[] = [];
  readonly #joinHandlers: ((peer: string) => void)[] = [];
  #started = false;
  #bytesSent = 0;
  #bytesReceived = 0;
  /** The last bootstrap list set (the bus connects everyone; kept so tests can read it). */
  peers: readonly string[] = [];

  constructor(peer: string, bus: MemoryBus) {
    this.peer = peer;
    this.#bus = bus;
  }

  async start(): Promise<void> {
    if (this.#started) return;
    this.#started = true;
    this.#bus.join(this);
  }

  async stop(): Promise<void> {
    this.#started = false;
    this.#bus.leave(this);
  }

  async publish(data: Uint8Array): Promise<void> {
    if (!this.#started) return;
    this.#bytesSent += data.byteLength;
    this.#bus.deliver(this.peer, data);
  }

  onMessage(handler: (data: Uint8Array, fromPeer: string) => void): void {
    this.#messageHandlers.push(handler);
  }

  onPeerJoined(handler: (peer: string) => void): void {
    this.#joinHandlers.push(handler);
  }

  setPeers(addrs: readonly string[]): void {
    this.peers = [...addrs];
  }

  stats(): MeshTransportStats {
    return { peers: this.#started ? this.#bus.peersOf(this.peer) : 0, bytesSent: this.#bytesSent, bytesReceived: this.#bytesReceived };
  }

  /** Called by the bus. */
  receive(data: Uint8Array, from: string): void {
    if (!this.#started) return;
    this.#bytesReceived += data.byteLength;
    for (const handler of this.#messageHandlers) handler(data, from);
  }

  /** Called by the bus. */
  joined(peer: string): void {
    if (!this.#started) return;
    queueMicrotask(() => {
      for (const handler of this.#joinHandlers) handler(peer);
    });
  }
}
