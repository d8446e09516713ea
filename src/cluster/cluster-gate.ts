// The replica's side of the shared slot leases: it asks the store for a lease on (node, model)
// under the node's limit, waits in the pair's global queue for an announcement of a freed slot
// (or one short poll when a message was lost), renews what it holds three times per lease_ttl,
// and, when the store cannot be reached, falls back to its share of each node's slots until the
// store answers again; the rejoin registers every lease still held, so none is counted twice.

import { randomBytes } from 'node:crypto';
import type { Clock, Timer } from '#src/core/clock.ts';
import { fallbackPollMs, fallbackShare, renewEveryMs, type ClusterMode, type ClusterStatus } from './fallback-share.ts';
import { HeldLeases, pairKey } from './held-leases.ts';
import type { ClusterStore, Pair } from './store-port.ts';
import { liveReplicasAnswer } from './store-answers.ts';

export interface ClusterGateOptions {
  readonly store: ClusterStore;
  readonly replica: string;
  readonly leaseTtlMs: number;
  readonly clock: Clock;
  readonly logger: GateLogger;
  /** Told on every change of mode (metrics). */
  readonly onMode?: (mode: ClusterMode) => void;
}

/** The two log calls the gate makes (a pino logger is one). */
export interface GateLogger {
  warn(fields: object, message: string): void;
  info(fields: object, message: string): void;
}

/** How one wait for a lease ended. */
export type GateOutcome =
  | { readonly kind: 'granted'; release(): void }
  | { readonly kind: 'aborted' }
  | { readonly kind: 'timed_out' }
  /** Another replica's switch on the limited router means this request would make it load its model: route again. */
  | { readonly kind: 'switching' };

export class ClusterGate {
  readonly #o: ClusterGateOptions;
  readonly #held = new HeldLeases();
  /** Wake-ups of the waiters of each pair (an announcement, a local release, a change of mode). */
  readonly #wakers = new Map<string, Set<() => void>>();
  #mode: ClusterMode = 'fallback';
  #live = 1;
  #since: number | undefined;
  #reason: string | undefined = 'not connected yet';
  #losses = 0;
  #seq = 0;
  /** Lease ids are unique per run: a replica restarted under the same name never reuses a live one's id. */
  readonly #run = randomBytes(4).toString('hex');
  #timer: Timer | undefined;
  #stopped = false;
  /** Told on every change of mode (the option's, and `onModeChange`'s). */
  readonly #modeListeners: ((mode: ClusterMode) => void)[] = [];
  /** Told when the store answers again after fallback (its first renewal done): `onRejoin`'s hooks. */
  readonly #rejoinHooks: (() => void)[] = [];
  /** In fallback, while a renew probes the store: no lease is granted locally that the rejoin would miss. */
  #rejoining = false;

  constructor(options: ClusterGateOptions) {
    this.#o = options;
    this.#since = options.clock.now();
    if (options.onMode !== undefined) this.#modeListeners.push(options.onMode);
    options.store.onFreed((pair) => this.#wake(pair));
  }

  /** Told on every change of mode. */
  onModeChange(listener: (mode: ClusterMode) => void): void {
    this.#modeListeners.push(listener);
  }

  /**
   * Told each time the replica is back to shared after a fallback (the leases held are registered
   * again by then): what was counted alone meanwhile (tenant usage) is to be added to the store.
   */
  onRejoin(hook: () => void): void {
    this.#rejoinHooks.push(hook);
  }

  /** Joins the store (one renew: the heartbeat), then keeps renewing; a store down now means fallback. */
  async start(): Promise<void> {
    await this.#tick();
    if (this.#mode === 'fallback') {
      this.#losses += 1;
      this.#o.logger.warn(
        { replica: this.#o.replica, reason: this.#reason },
        'cluster store lost at start (unreachable, or its answers are not usable): this replica counts itself alone until it answers',
      );
      this.#tell('fallback');
    }
  }

  stop(): void {
    this.#stopped = true;
    this.#timer?.cancel();
  }

  status(): ClusterStatus {
    return {
      replica: this.#o.replica,
      mode: this.#mode,
      liveReplicas: this.#live,
      ...this.#held.totals(),
      since: this.#since,
      reason: this.#reason,
      losses: this.#losses,
    };
  }

  /** Waits for a lease on `pair` under `limit` slots until `deadlineMs` (monotonic) or `signal`; `modelsMax` > 0: a limited router's switch guard applies. */
  async acquire(pair: Pair, limit: number, deadlineMs: number, signal: AbortSignal, modelsMax = 0): Promise<GateOutcome> {
    this.#seq += 1;
    const id = `${this.#o.replica}/${this.#run}/${this.#seq}`;
    let queued = false;
    const leave = (): void => {
      if (!queued) return;
      this.#held.dropWaiter(pair, id);
      if (this.#mode === 'shared') this.#call(this.#o.store.leave(pair, id));
    };
    for (;;) {
      if (signal.aborted) return (leave(), { kind: 'aborted' });
      const left = deadlineMs - this.#o.clock.monotonicMs();
      if (left <= 0) return (leave(), { kind: 'timed_out' });
      let lostNow = false;
      if (this.#mode === 'shared') {
        const answer = await this.#o.store.acquire(pair, id, id, limit, modelsMax).catch((error: unknown) => this.#lost(error));
        if (answer?.switching === true) {
          if (queued) this.#held.dropWaiter(pair, id);
          return { kind: 'switching' };
        }
        if (answer?.granted === true) {
          this.#held.dropWaiter(pair, id);
          return this.#granted(pair, id);
        }
        if (answer !== undefined) {
          queued = true;
          this.#held.addWaiter(pair, id);
        } else lostNow = true;
      } else if (!this.#rejoining && this.#held.leasesOn(pair) < fallbackShare(limit, this.#live)) {
        leave();
        return this.#granted(pair, id);
      }
      // A lost store answer (now fallback) tries again at once; otherwise wait for a wake-up or one poll.
      if (this.#mode === 'shared' || !lostNow)
        await this.#waitForWake(pair, Math.min(left, fallbackPollMs(this.#o.leaseTtlMs)), signal);
    }
  }

  /**
   * Whether this replica is the one to send `node`'s wake in this window. Without the store (or
   * when it fails) every replica decides alone: a duplicate wake is harmless, a missing one is not.
   */
  async wakeOnce(node: string, windowMs: number): Promise<boolean> {
    if (this.#mode !== 'shared') return true;
    return this.#o.store.claimOnce(`wake:${node}`, windowMs).catch((error: unknown) => (this.#lost(error), true));
  }

  /** Whether calls go to the store now (false: fallback, each replica counts its share alone). */
  shared(): boolean {
    return this.#mode === 'shared';
  }

  /** Another user of the store (tenant limits) saw a call fail: the same fallback, logged once per loss. */
  storeFailed(error: unknown): void {
    this.#lost(error);
  }

  #granted(pair: Pair, id: string): GateOutcome {
    this.#held.addLease(pair, id);
    return {
      kind: 'granted',
      release: () => {
        if (!this.#held.dropLease(pair, id)) return;
        if (this.#mode === 'shared') this.#call(this.#o.store.release(pair, id));
        // A waiter of this replica may go now (in fallback: under its share; shared: the announcement also comes).
        this.#wake(pair);
      },
    };
  }

  #waitForWake(pair: Pair, ms: number, signal: AbortSignal): Promise<void> {
    const key = pairKey(pair);
    return new Promise((resolve) => {
      let set = this.#wakers.get(key);
      if (set === undefined) {
        set = new Set();
        this.#wakers.set(key, set);
      }
      const wakers = set;
      const done = (): void => {
        timer.cancel();
        signal.removeEventListener('abort', done);
        wakers.delete(done);
        if (wakers.size === 0 && this.#wakers.get(key) === wakers) this.#wakers.delete(key);
        resolve();
      };
      const timer = this.#o.clock.setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
      wakers.add(done);
    });
  }

  #wake(pair: Pair): void {
    for (const done of [...(this.#wakers.get(pairKey(pair)) ?? [])]) done();
  }

  #wakeAll(): void {
    for (const set of [...this.#wakers.values()]) for (const done of [...set]) done();
  }

  /** A store call whose answer nobody waits for: its failure still means the store is lost. */
  #call(work: Promise<unknown>): void {
    work.catch((error: unknown) => this.#lost(error));
  }

  /** The store failed a call: fall back (logged once per loss); the renew loop probes for its return. */
  #lost(error: unknown): undefined {
    if (this.#mode === 'fallback') this.#reason = error instanceof Error ? error.message : String(error);
    if (this.#mode === 'fallback' || this.#stopped) return undefined;
    this.#mode = 'fallback';
    this.#since = this.#o.clock.now();
    this.#reason = error instanceof Error ? error.message : String(error);
    this.#losses += 1;
    this.#o.logger.warn(
      { replica: this.#o.replica, reason: this.#reason, liveReplicas: this.#live },
      "cluster store lost: each node's slots and each tenant limit fall back to this replica's share until it answers again",
    );
    this.#tell('fallback');
    this.#wakeAll();
    return undefined;
  }

  /** Renews every lease and waiter held (a rejoin registers them again), then schedules the next. */
  async #tick(): Promise<void> {
    if (this.#stopped) return;
    this.#rejoining = this.#mode === 'fallback';
    try {
      // A count that is not one (any store port's) is a lost store: the last good count stays, the share is never NaN.
      this.#live = liveReplicasAnswer(await this.#o.store.renew(this.#held.snapshot()), 'renew');
      if (this.#mode === 'fallback') this.#rejoined();
    } catch (error) {
      this.#lost(error);
    } finally {
      this.#rejoining = false;
    }
    if (this.#stopped) return;
    const every = this.#mode === 'shared' ? renewEveryMs(this.#o.leaseTtlMs) : fallbackPollMs(this.#o.leaseTtlMs);
    this.#timer = this.#o.clock.setTimeout(() => void this.#tick(), every);
  }

  #rejoined(): void {
    const first = this.#losses === 0;
    this.#mode = 'shared';
    this.#since = undefined;
    this.#reason = undefined;
    this.#o.logger.info(
      { replica: this.#o.replica, liveReplicas: this.#live, ...this.#held.totals() },
      first ? 'cluster store joined' : 'cluster store answers again: leases held were registered again, slots are shared again',
    );
    this.#tell('shared');
    this.#wakeAll();
    if (!first) for (const hook of [...this.#rejoinHooks]) hook();
  }

  #tell(mode: ClusterMode): void {
    for (const listener of [...this.#modeListeners]) listener(mode);
  }
}
