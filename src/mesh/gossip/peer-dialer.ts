// Keeps the `[mesh] peers` bootstrap addresses connected: dials each one, and redials with
// exponential back-off whenever a dial fails or the connection drops, for as long as the address
// is configured. A reload (`setPeers`) dials the new addresses and forgets the removed ones.
// A peer that shows it is up again — it connects to us, or its own record arrives relayed by
// others — is dialled at once, its back-off started again (`seenAgain`, pure): on a cold start the
// sites that come up last are otherwise found only when a back-off grown toward 30 s runs out.
// The dialling itself is behind `Dialer`, so this loop is tested with a fake and a ManualClock.

import { multiaddr } from '@multiformats/multiaddr';
import type { Clock, Timer } from '../../core/clock.ts';
import { redialDelayMs, type BackoffPolicy } from './backoff.ts';

/** A bootstrap address and the peer it names (`/p2p/<id>`). */
export interface DialTarget {
  readonly addr: string;
  readonly peerId: string;
}

export interface Dialer {
  /** Resolves once connected; rejects on failure. Bounded in time by the implementation. */
  dial(target: DialTarget, signal: AbortSignal): Promise<void>;
  /** Whether any connection (ours or theirs) to this peer is open now. */
  connected(peerId: string): boolean;
}

export interface DialerEvents {
  /** A dial failed; the next attempt is in `nextMs`. */
  dialFailed?(target: DialTarget, attempt: number, error: unknown, nextMs: number): void;
  /** An address in `setPeers` could not be used (it is skipped; the others still apply). */
  badAddress?(addr: string, problem: string): void;
}

/** Parses a bootstrap multiaddr; it must name its peer (`/p2p/<id>`), or the dial could reach anyone. */
export function parsePeerAddress(addr: string): DialTarget | { readonly problem: string } {
  try {
    const p2p = multiaddr(addr)
      .getComponents()
      .filter((c) => c.name === 'p2p');
    const peerId = p2p.at(-1)?.value;
    if (peerId === undefined) return { problem: `peer address ${addr} does not end in /p2p/<peer id>` };
    return { addr, peerId };
  } catch (error) {
    return { problem: `peer address ${addr} is not a multiaddr: ${error instanceof Error ? error.message : String(error)}` };
  }
}

/** How a peer showed that it is up, though this site may not be connected to it. */
export type PeerSighting =
  /** A connection to it opened (either way): it dialled in, or another path reached it. */
  | 'connected'
  /** A message it signed arrived, relayed by other peers. */
  | 'message';

/** What the dialer knows about one bootstrap peer when it is seen (plain data, for `seenAgain`). */
export interface SightingFacts {
  readonly sighting: PeerSighting;
  /** A connection to it is open now (ours or theirs). */
  readonly connected: boolean;
  /** A dial of ours is in flight. */
  readonly dialing: boolean;
  /** Failed dials (or short-lived connections) in a row. */
  readonly attempt: number;
  /** When a sighting last started the back-off again (monotonic ms); undefined = never. */
  readonly lastResetAt: number | undefined;
  readonly nowMs: number;
}

export type SightingAction =
  /** Leave it be; `why` says which fact decided. */
  | { readonly kind: 'none'; readonly why: 'dialing' | 'connected' | 'reset_recently' }
  /** It is connected: cancel the pending redial; `reset` starts the back-off from the shortest delay. */
  | { readonly kind: 'connected'; readonly reset: boolean }
  /** Not connected but up: start the back-off again and dial it now. */
  | { readonly kind: 'dial_now' };

/**
 * Pure: what seeing a bootstrap peer changes. Its back-off measured how long it had been away, so
 * a sighting starts it again and a peer not connected is dialled now. At most one reset per
 * `maxMs` (the longest back-off), so a peer that is up but unreachable from here (a wrong address,
 * a firewall) and publishes every heartbeat is still dialled no more often than the back-off
 * allows, and a flapping peer keeps climbing it. A sighting during our own dial changes nothing.
 */
export function seenAgain(facts: SightingFacts, policy: BackoffPolicy): SightingAction {
  if (facts.dialing) return { kind: 'none', why: 'dialing' };
  const resetAllowed = facts.lastResetAt === undefined || facts.nowMs - facts.lastResetAt >= policy.maxMs;
  if (facts.connected) {
    // Its messages arrive every heartbeat over the open connection: nothing to do for those.
    if (facts.sighting === 'message') return { kind: 'none', why: 'connected' };
    return { kind: 'connected', reset: facts.attempt > 0 && resetAllowed };
  }
  return resetAllowed ? { kind: 'dial_now' } : { kind: 'none', why: 'reset_recently' };
}

interface Entry {
  readonly target: DialTarget;
  /** Failed dials (or short-lived connections) in a row; sets the next delay. */
  attempt: number;
  timer: Timer | undefined;
  dialing: boolean;
  /** When the current connection opened (monotonic ms), to tell a flapping peer from a stable one. */
  connectedAt: number | undefined;
  /** When a sighting last started the back-off again (see `seenAgain`). */
  lastResetAt: number | undefined;
}

export interface PeerDialerOptions {
  readonly dialer: Dialer;
  readonly clock: Clock;
  readonly random: () => number;
  readonly policy: BackoffPolicy;
  readonly events?: DialerEvents;
}

export class PeerDialer {
  readonly #opts: PeerDialerOptions;
  readonly #entries = new Map<string, Entry>();
  readonly #stopping = new AbortController();

  constructor(opts: PeerDialerOptions) {
    this.#opts = opts;
  }

  /** Applies the configured address list: new addresses are dialled now, removed ones forgotten. */
  setPeers(addrs: readonly string[]): void {
    if (this.#stopping.signal.aborted) return;
    const wanted = new Map<string, DialTarget>();
    for (const addr of addrs) {
      const parsed = parsePeerAddress(addr);
      if ('problem' in parsed) this.#opts.events?.badAddress?.(addr, parsed.problem);
      else wanted.set(addr, parsed);
    }
    for (const [addr, entry] of this.#entries) {
      if (wanted.has(addr)) continue;
      entry.timer?.cancel();
      this.#entries.delete(addr);
    }
    for (const [addr, target] of wanted) {
      if (this.#entries.has(addr)) continue;
      const entry: Entry = {
        target,
        attempt: 0,
        timer: undefined,
        dialing: false,
        connectedAt: undefined,
        lastResetAt: undefined,
      };
      this.#entries.set(addr, entry);
      this.#schedule(entry, 0);
    }
  }

  /** The connection to `peerId` closed: redial it if it is a bootstrap peer. */
  peerDisconnected(peerId: string): void {
    for (const entry of this.#entries.values()) {
      if (entry.target.peerId !== peerId || entry.dialing || entry.timer !== undefined) continue;
      // A connection that stayed up past the longest back-off was healthy: start again from the
      // shortest delay. One that dropped soon after it opened keeps climbing, so a flapping peer
      // is not redialled twice a second forever.
      const upMs = entry.connectedAt === undefined ? 0 : this.#opts.clock.monotonicMs() - entry.connectedAt;
      if (upMs >= this.#opts.policy.maxMs) entry.attempt = 0;
      this.#retry(entry);
    }
  }

  /**
   * `peerId` showed it is up: a connection to it opened, or a message it signed arrived. A
   * bootstrap peer not connected is dialled now instead of at the end of its back-off.
   */
  peerSeen(peerId: string, sighting: PeerSighting): void {
    if (this.#stopping.signal.aborted) return;
    const now = this.#opts.clock.monotonicMs();
    for (const entry of this.#entries.values()) {
      if (entry.target.peerId !== peerId) continue;
      const connected = this.#opts.dialer.connected(peerId);
      const action = seenAgain(
        { sighting, connected, dialing: entry.dialing, attempt: entry.attempt, lastResetAt: entry.lastResetAt, nowMs: now },
        this.#opts.policy,
      );
      if (action.kind === 'none') continue;
      if (action.kind === 'connected') {
        entry.timer?.cancel();
        entry.timer = undefined;
        entry.connectedAt = now;
        if (action.reset) this.#reset(entry, now);
        continue;
      }
      this.#reset(entry, now);
      this.#schedule(entry, 0);
    }
  }

  /** The addresses currently configured (for tests and /admin). */
  targets(): readonly DialTarget[] {
    return [...this.#entries.values()].map((e) => e.target);
  }

  /** Cancels every pending redial and aborts dials in flight. Idempotent. */
  stop(): void {
    this.#stopping.abort(new Error('mesh transport stopping'));
    for (const entry of this.#entries.values()) entry.timer?.cancel();
    this.#entries.clear();
  }

  #reset(entry: Entry, now: number): void {
    entry.attempt = 0;
    entry.lastResetAt = now;
  }

  #schedule(entry: Entry, delayMs: number): void {
    entry.timer?.cancel();
    entry.timer = this.#opts.clock.setTimeout(() => {
      entry.timer = undefined;
      void this.#dial(entry);
    }, delayMs);
  }

  /** Schedules the next dial after the back-off for this entry; returns the delay. */
  #retry(entry: Entry): number {
    const delay = redialDelayMs(entry.attempt, this.#opts.policy, this.#opts.random);
    entry.attempt += 1;
    this.#schedule(entry, delay);
    return delay;
  }

  #current(entry: Entry): boolean {
    return !this.#stopping.signal.aborted && this.#entries.get(entry.target.addr) === entry;
  }

  async #dial(entry: Entry): Promise<void> {
    if (!this.#current(entry) || entry.dialing) return;
    if (this.#opts.dialer.connected(entry.target.peerId)) {
      entry.connectedAt = this.#opts.clock.monotonicMs();
      return;
    }
    entry.dialing = true;
    try {
      await this.#opts.dialer.dial(entry.target, this.#stopping.signal);
      entry.connectedAt = this.#opts.clock.monotonicMs();
    } catch (error) {
      if (!this.#current(entry)) return;
      const attempt = entry.attempt;
      const nextMs = this.#retry(entry);
      this.#opts.events?.dialFailed?.(entry.target, attempt, error, nextMs);
    } finally {
      entry.dialing = false;
    }
    // The connection may have dropped while the dial was settling (no disconnect event is owed
    // to a dial that had not finished); check once more so the peer is not forgotten.
    if (this.#current(entry) && entry.timer === undefined && !this.#opts.dialer.connected(entry.target.peerId)) {
      this.#retry(entry);
    }
  }
}
