// [cluster]: a router's one-switch-at-a-time across replicas. This replica's switch tickets are
// claimed in the store (switch-lua.ts) before the switch starts, renewed three times per lease_ttl
// while held and released with the ticket; the other replicas' claims are kept in a local cache fed
// by the gate's announcements and a short poll of the nodes cached, so the synchronous routing
// decisions see them. Store lost: claims are granted locally (each replica is back to its own
// book, a switch may overlap), and a remote claim seen before counts until its lease would expire.

import { randomBytes } from 'node:crypto';
import type { Clock, Timer } from '#src/core/clock.ts';
import type { SwitchSharing, SwitchTicket } from '#src/nodes/index.ts';
import { fallbackPollMs, renewEveryMs } from './fallback-share.ts';
import type { ClusterGate } from './cluster-gate.ts';
import type { SwitchClaimFields } from './switch-lua.ts';

/** The store calls a switch claim makes (redis-store.ts implements them). */
export interface SwitchStore {
  takeSwitch(node: string, claim: SwitchClaimFields): Promise<SwitchClaimFields | undefined>;
  renewSwitch(node: string, claim: SwitchClaimFields): Promise<boolean>;
  releaseSwitch(node: string, holder: string): Promise<void>;
  peekSwitch(node: string): Promise<SwitchClaimFields | undefined>;
  onSwitch(listener: (node: string) => void): void;
}

export interface SharedSwitchesOptions {
  readonly store: SwitchStore;
  readonly gate: Pick<ClusterGate, 'shared' | 'storeFailed'>;
  readonly replica: string;
  readonly leaseTtlMs: number;
  readonly clock: Clock;
  /** Another replica's claim on `node` came or went: the node's listing and the queues look again. */
  readonly changed: (node: string) => void;
}

/** Pure: a store claim as a switch ticket of its replica. */
export function ticketOfClaim(claim: SwitchClaimFields): SwitchTicket {
  return { model: claim.model, action: claim.action, by: claim.by, loaded: claim.loaded, victim: claim.victim, replica: claim.replica };
}

/** Pure: whether a remote claim last seen at `seenAtMs` still counts (shared: until the store says otherwise; lost: until its lease would expire). */
export function remoteCounts(shared: boolean, seenAtMs: number, nowMs: number, leaseTtlMs: number): boolean {
  return shared || nowMs - seenAtMs < leaseTtlMs;
}

interface Remote {
  readonly ticket: SwitchTicket;
  readonly seenAtMs: number;
}

export class SharedSwitches implements SwitchSharing {
  readonly #o: SharedSwitchesOptions;
  readonly #mine = new Map<string, SwitchClaimFields>();
  readonly #remote = new Map<string, Remote>();
  readonly #run = randomBytes(4).toString('hex');
  #seq = 0;
  #renewTimer: Timer | undefined;
  #pollTimer: Timer | undefined;
  #stopped = false;

  constructor(options: SharedSwitchesOptions) {
    this.#o = options;
    options.store.onSwitch((node) => void this.#look(node));
  }

  start(): void {
    this.#scheduleRenew();
    this.#schedulePoll();
  }

  stop(): void {
    this.#stopped = true;
    this.#renewTimer?.cancel();
    this.#pollTimer?.cancel();
  }

  remote(node: string): SwitchTicket | undefined {
    const seen = this.#remote.get(node);
    if (seen === undefined) return undefined;
    if (remoteCounts(this.#o.gate.shared(), seen.seenAtMs, this.#o.clock.monotonicMs(), this.#o.leaseTtlMs)) return seen.ticket;
    this.#remote.delete(node);
    return undefined;
  }

  remoteHeld(): readonly (readonly [string, SwitchTicket])[] {
    return [...this.#remote.keys()].flatMap((node) => {
      const ticket = this.remote(node);
      return ticket === undefined ? [] : [[node, ticket] as const];
    });
  }

  async claim(node: string, ticket: SwitchTicket): Promise<SwitchTicket | undefined> {
    this.#seq += 1;
    const claim: SwitchClaimFields = { holder: `${this.#o.replica}/${this.#run}/${this.#seq}`, replica: this.#o.replica, model: ticket.model, action: ticket.action, by: ticket.by, loaded: ticket.loaded, victim: ticket.victim };
    if (this.#o.gate.shared()) {
      try {
        const other = await this.#o.store.takeSwitch(node, claim);
        if (other !== undefined) {
          this.#seen(node, other);
          return ticketOfClaim(other);
        }
      } catch (error) {
        this.#o.gate.storeFailed(error);
      }
    }
    // Claimed (or the store is lost: this replica's own book decides); the renewal registers it on rejoin.
    this.#mine.set(node, claim);
    return undefined;
  }

  update(node: string, ticket: SwitchTicket): void {
    const mine = this.#mine.get(node);
    if (mine === undefined) return;
    const next = { ...mine, loaded: ticket.loaded };
    this.#mine.set(node, next);
    if (this.#o.gate.shared()) this.#call(this.#o.store.takeSwitch(node, next));
  }

  release(node: string): void {
    const mine = this.#mine.get(node);
    if (mine === undefined) return;
    this.#mine.delete(node);
    if (this.#o.gate.shared()) this.#call(this.#o.store.releaseSwitch(node, mine.holder));
  }

  #call(work: Promise<unknown>): void {
    work.catch((error: unknown) => this.#o.gate.storeFailed(error));
  }

  #seen(node: string, claim: SwitchClaimFields | undefined): void {
    const before = this.#remote.get(node)?.ticket;
    const mine = this.#mine.get(node);
    if (claim === undefined || claim.holder === mine?.holder) this.#remote.delete(node);
    else this.#remote.set(node, { ticket: ticketOfClaim(claim), seenAtMs: this.#o.clock.monotonicMs() });
    const after = this.#remote.get(node)?.ticket;
    if (before?.model !== after?.model || before?.loaded !== after?.loaded || before?.replica !== after?.replica || before?.action !== after?.action) this.#o.changed(node);
  }

  async #look(node: string): Promise<void> {
    if (!this.#o.gate.shared()) return;
    try {
      this.#seen(node, await this.#o.store.peekSwitch(node));
    } catch (error) {
      this.#o.gate.storeFailed(error);
    }
  }

  #scheduleRenew(): void {
    if (this.#stopped) return;
    this.#renewTimer = this.#o.clock.setTimeout(() => {
      if (this.#o.gate.shared()) {
        for (const [node, claim] of this.#mine) this.#call(this.#o.store.renewSwitch(node, claim));
      }
      this.#scheduleRenew();
    }, renewEveryMs(this.#o.leaseTtlMs));
  }

  /** A lost announcement costs one poll: the nodes with a remote claim cached are looked at again. */
  #schedulePoll(): void {
    if (this.#stopped) return;
    this.#pollTimer = this.#o.clock.setTimeout(() => {
      const nodes = [...this.#remote.keys()];
      if (nodes.length === 0 || !this.#o.gate.shared()) {
        for (const node of nodes) if (this.remote(node) === undefined) this.#o.changed(node);
        this.#schedulePoll();
        return;
      }
      void Promise.all(nodes.map((node) => this.#look(node))).finally(() => this.#schedulePoll());
    }, fallbackPollMs(this.#o.leaseTtlMs));
  }
}
