// An in-process gossip bus for tests, on the MeshTransport contract: a message reaches the peers
// its publisher is linked to, and each passes it on to its own neighbours only when its judge
// accepts it (so a rejected or ignored message goes no further), once per peer. By default every
// member is linked to every other; `link()` sets a sparser graph (a relay, a peer only one site
// knows). A partition separates groups; a member's admission refuses peers it does not admit, as
// the libp2p connection gater does, and bounds what it judges per neighbour per second. Delivery
// is asynchronous (a microtask), like a network; byte counters count what arrives, judged or not.

import { PeerRate } from './peer-rate.ts';
import { worstVerdict } from './verdict.ts';
import type { MeshTransport, MeshTransportStats, MessageVerdict, PeerAdmission } from './transport.ts';

/** Messages whose relay path is remembered (to deliver each once per peer). */
const SEEN_MESSAGES = 4_096;

/** Connects the memory transports of several in-process sites. */
export class MemoryBus {
  readonly #members = new Map<string, MemoryTransport>();
  /** Peer → its partition group; peers in different groups do not hear each other. */
  readonly #groups = new Map<string, number>();
  /** Undefined = everyone is linked with everyone; else the pairs (`a\nb`, a < b) that are. */
  #links: Set<string> | undefined;
  /** Message id → the peers it has reached (its publisher included). */
  readonly #seen = new Map<number, Set<string>>();
  #nextId = 0;
  readonly now: () => number;

  constructor(options: { readonly now?: () => number } = {}) {
    this.now = options.now ?? (() => performance.now());
  }

  /**
   * A transport named `peer` on this bus (not connected until started). `peerId` is what other
   * members see as its author and admit or not (default: the name); links and partitions use names.
   */
  transport(peer: string, peerId: string = peer): MemoryTransport {
    return new MemoryTransport(peer, peerId, this);
  }

  /** Links only these pairs of peers (others hear each other only by relay); no pairs = everyone linked again. */
  link(...pairs: readonly (readonly [string, string])[]): void {
    this.#links = pairs.length === 0 ? undefined : new Set(pairs.map(([a, b]) => pairKey(a, b)));
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
    const apart = new Set(before.flatMap((a) => before.filter((b) => a < b && !this.#sameSide(a, b)).map((b) => pairKey(a, b))));
    this.#groups.clear();
    for (const pair of apart) {
      const [a, b] = pair.split('\n') as [string, string];
      const ma = this.#members.get(a);
      const mb = this.#members.get(b);
      if (ma === undefined || mb === undefined || !this.neighbours(a, b)) continue;
      ma.joined(mb.peerId);
      mb.joined(ma.peerId);
    }
  }

  join(member: MemoryTransport): void {
    this.#members.set(member.peer, member);
    for (const other of this.#members.values()) {
      if (other === member || !this.neighbours(member.peer, other.peer)) continue;
      other.joined(member.peerId);
      member.joined(other.peerId);
    }
  }

  leave(member: MemoryTransport): void {
    this.#members.delete(member.peer);
  }

  /** A new message from `from`: to its neighbours, who relay it on if they accept it. Answers how many got it first-hand. */
  deliver(from: string, data: Uint8Array): number {
    const id = (this.#nextId += 1);
    this.#seen.set(id, new Set([from]));
    if (this.#seen.size > SEEN_MESSAGES) this.#seen.delete(this.#seen.keys().next().value ?? id);
    return this.relay(from, this.#members.get(from)?.peerId ?? from, data, id);
  }

  /** Passes message `id` (by `origin`, a peer id) from member `via` to every neighbour it has not reached yet. */
  relay(via: string, origin: string, data: Uint8Array, id: number): number {
    const seen = this.#seen.get(id);
    if (seen === undefined) return 0;
    let heard = 0;
    for (const other of this.#members.values()) {
      if (seen.has(other.peer) || !this.neighbours(via, other.peer)) continue;
      seen.add(other.peer);
      heard += 1;
      const copy = data.slice();
      const viaId = this.#members.get(via)?.peerId ?? via;
      queueMicrotask(() => other.receive(copy, origin, viaId, id));
    }
    return heard;
  }

  peersOf(peer: string): number {
    return [...this.#members.keys()].filter((p) => p !== peer && this.neighbours(peer, p)).length;
  }

  /** Linked, on one side of any partition, both started, and each admitting the other. */
  neighbours(a: string, b: string): boolean {
    const ma = this.#members.get(a);
    const mb = this.#members.get(b);
    if (ma === undefined || mb === undefined || !this.#sameSide(a, b)) return false;
    if (this.#links !== undefined && !this.#links.has(pairKey(a, b))) return false;
    return ma.admits(mb.peerId) && mb.admits(ma.peerId);
  }

  #sameSide(a: string, b: string): boolean {
    return (this.#groups.get(a) ?? 0) === (this.#groups.get(b) ?? 0);
  }
}

function pairKey(a: string, b: string): string {
  return a < b ? `${a}\n${b}` : `${b}\n${a}`;
}

export class MemoryTransport implements MeshTransport {
  /** The name on the bus (links, partitions). */
  readonly peer: string;
  /** What other members see as this transport's author id. */
  readonly peerId: string;
  readonly #bus: MemoryBus;
  readonly #judges: ((data: Uint8Array, fromPeer: string) => MessageVerdict)[] = [];
  readonly #joinHandlers: ((peer: string) => void)[] = [];
  #admitted: ReadonlySet<string> | undefined;
  readonly #rate = new PeerRate(Number.POSITIVE_INFINITY);
  #started = false;
  #bytesSent = 0;
  #bytesReceived = 0;
  /** The last bootstrap list set (the bus connects everyone; kept so tests can read it). */
  peers: readonly string[] = [];

  constructor(peer: string, peerId: string, bus: MemoryBus) {
    this.peer = peer;
    this.peerId = peerId;
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

  onMessage(judge: (data: Uint8Array, fromPeer: string) => MessageVerdict): void {
    this.#judges.push(judge);
  }

  onPeerJoined(handler: (peer: string) => void): void {
    this.#joinHandlers.push(handler);
  }

  admit(admission: PeerAdmission): void {
    this.#admitted = admission.peers;
    this.#rate.setLimit(admission.maxMessagesPerSecond);
  }

  /** Whether this transport keeps a connection with `peer` (the gater's decision). */
  admits(peer: string): boolean {
    return this.#admitted === undefined || this.#admitted.has(peer);
  }

  setPeers(addrs: readonly string[]): void {
    this.peers = [...addrs];
  }

  stats(): MeshTransportStats {
    return {
      peers: this.#started ? this.#bus.peersOf(this.peer) : 0,
      bytesSent: this.#bytesSent,
      bytesReceived: this.#bytesReceived,
    };
  }

  /** Called by the bus: message `id` by `origin`, passed on by neighbour `via` (peer ids). */
  receive(data: Uint8Array, origin: string, via: string, id: number): void {
    if (!this.#started) return;
    this.#bytesReceived += data.byteLength;
    if (!this.#rate.take(via, this.#bus.now())) return;
    if (worstVerdict(this.#judges.map((judge) => judge(data, origin))) === 'accept') this.#bus.relay(this.peer, origin, data, id);
  }

  /** Called by the bus. */
  joined(peer: string): void {
    if (!this.#started) return;
    queueMicrotask(() => {
      for (const handler of this.#joinHandlers) handler(peer);
    });
  }
}
