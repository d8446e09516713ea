// How many gossip messages a transport judges per peer per second (`[mesh]
// max_peer_messages_per_second`): a fixed one-second window per peer, the time given by the caller.
// Memory is bounded: a window is dropped once it is over, and at most MAX_PEERS windows are held.
// Within the bound a message is judged; past it, it is dropped unjudged (ignored); past twice the
// bound the peer is flooding, and what it passes on is rejected, so gossipsub's score soon has it
// ignored at the RPC level (before gossipsub spends a signature check on each message).

/** More distinct peers than a site is ever connected to at once. */
const MAX_PEERS = 4_096;
const WINDOW_MS = 1_000;

interface Window {
  readonly start: number;
  count: number;
}

export class PeerRate {
  readonly #windows = new Map<string, Window>();
  #limit: number;

  constructor(limit: number) {
    this.#limit = limit;
  }

  setLimit(limit: number): void {
    this.#limit = limit;
  }

  /** True when one more message from `peer` may be judged now (and counts it). */
  take(peer: string, nowMs: number): boolean {
    return this.verdict(peer, nowMs) === 'judge';
  }

  /** Counts one more message from `peer`: judge it, drop it (`ignore`), or drop and penalise (`reject`). */
  verdict(peer: string, nowMs: number): 'judge' | 'ignore' | 'reject' {
    let window = this.#windows.get(peer);
    if (window === undefined || nowMs - window.start >= WINDOW_MS || nowMs < window.start) {
      this.#windows.delete(peer);
      if (this.#windows.size >= MAX_PEERS) this.#prune(nowMs);
      window = { start: nowMs, count: 0 };
      this.#windows.set(peer, window);
    }
    window.count += 1;
    if (window.count <= this.#limit) return 'judge';
    return window.count <= 2 * this.#limit ? 'ignore' : 'reject';
  }

  forget(peer: string): void {
    this.#windows.delete(peer);
  }

  /** Drops every window that is over; if all are current, the oldest (insertion order). */
  #prune(nowMs: number): void {
    for (const [peer, window] of this.#windows) if (nowMs - window.start >= WINDOW_MS) this.#windows.delete(peer);
    const oldest = this.#windows.keys().next();
    if (this.#windows.size >= MAX_PEERS && oldest.done !== true) this.#windows.delete(oldest.value);
  }
}
