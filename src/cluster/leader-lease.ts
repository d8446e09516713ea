// One leader among the replicas of a site: a lease key held with SET NX PX and renewed by its
// holder (cluster/lua.ts HOLD). The key lives two thirds of lease_ttl and every replica asks
// every third, so when the holder dies another holds it within lease_ttl; a holder that stops
// gives it up at once. While the store cannot be reached, every replica leads by default (the mesh:
// a duplicate site record is harmless — receivers keep the highest revision —, a missing one makes
// the site stale); a lease whose work must never run twice at once (the batch runner) asks for
// `leadsWhileUnreachable: false`: a replica that cannot renew stops leading before its key expires.

import { randomBytes } from 'node:crypto';
import type { Clock, Timer } from '#src/core/clock.ts';

/** The two store calls a leader lease makes (redis-store.ts implements them). */
export interface LeaderStore {
  /** Renews the lease if `holder` has it, takes it if free; true = `holder` holds it now. */
  holdLease(key: string, holder: string, ttlMs: number): Promise<boolean>;
  dropLease(key: string, holder: string): Promise<void>;
}

export interface LeaderLeaseOptions {
  readonly store: LeaderStore;
  /** The lease's name in the store (e.g. "mesh"). */
  readonly name: string;
  readonly replica: string;
  readonly leaseTtlMs: number;
  readonly clock: Clock;
  /** Told on every change of leadership. */
  readonly onChange: (leading: boolean) => void;
  /** A store call failed (the slot gate's fallback, logged once). */
  readonly lost: (error: unknown) => void;
  /** Whether this replica leads while the store cannot be reached; default true. */
  readonly leadsWhileUnreachable?: boolean;
}

/** Pure: how long the key lives, and how often every replica asks. */
export function leaderTimings(leaseTtlMs: number): { keyTtlMs: number; everyMs: number } {
  return { keyTtlMs: Math.max(30, Math.floor((leaseTtlMs * 2) / 3)), everyMs: Math.max(10, Math.floor(leaseTtlMs / 3)) };
}

export class LeaderLease {
  readonly #o: LeaderLeaseOptions;
  readonly #holder: string;
  #leading: boolean | undefined;
  #timer: Timer | undefined;
  #stopped = false;

  constructor(options: LeaderLeaseOptions) {
    this.#o = options;
    this.#holder = `${options.replica}/${randomBytes(4).toString('hex')}`;
  }

  /** Asks once now (the first answer decides), then keeps asking. */
  async start(): Promise<void> {
    await this.#tick();
  }

  leading(): boolean {
    return this.#leading === true;
  }

  /** Stops asking and gives the lease up (bounded by the store's call timeout). */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#timer?.cancel();
    if (this.#leading === true) await this.#o.store.dropLease(this.#o.name, this.#holder).catch(() => undefined);
    this.#set(false);
  }

  async #tick(): Promise<void> {
    if (this.#stopped) return;
    const { keyTtlMs, everyMs } = leaderTimings(this.#o.leaseTtlMs);
    const leading = await this.#o.store.holdLease(this.#o.name, this.#holder, keyTtlMs).catch((error: unknown) => {
      this.#o.lost(error);
      return this.#o.leadsWhileUnreachable ?? true;
    });
    if (this.#stopped) return;
    this.#set(leading);
    this.#timer = this.#o.clock.setTimeout(() => void this.#tick(), everyMs);
  }

  #set(leading: boolean): void {
    if (this.#leading === leading) return;
    this.#leading = leading;
    this.#o.onChange(leading);
  }
}
