// [cluster]: a router's one-switch-at-a-time across replicas. This replica's switch tickets are
// claimed in the store (switch-lua.ts) before the switch starts, renewed three times per lease_ttl
// while held and released with the ticket; the other replicas' claims are kept in a local cache fed
// by the gate's announcements and a short poll of the nodes cached, so the synchronous routing
// decisions see them. A released remote switch stays (settled) until this replica's listing shows
// what it did (`caughtUp`), so a stale listing never sends a request for a model the switch
// unloaded. A claim refused because other replicas use its victim marks the victim busy here until
// their lease's release is announced (or one short poll). Store lost: claims are granted locally
// (each replica is back to its own book, a switch may overlap), and a remote claim seen before
// counts until its lease would expire.

import { randomBytes } from 'node:crypto';
import type { Clock, Timer } from '#src/core/clock.ts';
import type { ClaimAnswer, SwitchSharing, SwitchTicket } from '#src/nodes/index.ts';
import { fallbackPollMs, renewEveryMs } from './fallback-share.ts';
import type { ClusterGate } from './cluster-gate.ts';
import type { Pair } from './store-port.ts';
import { SETTLED_TTL_MS, type SwitchClaimFields, type SwitchRefusal } from './switch-lua.ts';

/** The store calls a switch claim makes (redis-store.ts implements them). */
export interface SwitchStore {
  takeSwitch(node: string, claim: SwitchClaimFields): Promise<SwitchRefusal | undefined>;
  renewSwitch(node: string, claim: SwitchClaimFields): Promise<boolean>;
  releaseSwitch(node: string, holder: string): Promise<void>;
  peekSwitch(node: string): Promise<SwitchClaimFields | undefined>;
  onSwitch(listener: (node: string) => void): void;
  onFreed(listener: (pair: Pair) => void): void;
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

/** Pure: a store claim (or a released switch's record) as a switch ticket of its replica. */
export function ticketOfClaim(claim: SwitchClaimFields): SwitchTicket {
  const ticket = {
    model: claim.model,
    action: claim.action,
    by: claim.by,
    loaded: claim.loaded,
    victim: claim.victim,
    replica: claim.replica,
  };
  return claim.settled === true ? { ...ticket, settled: true } : ticket;
}

/**
 * Pure: whether a remote claim last seen at `seenAtMs` still counts (shared: until the store says
 * otherwise, a released one at most SETTLED_TTL_MS; lost: until its lease would expire).
 */
export function remoteCounts(shared: boolean, seenAtMs: number, nowMs: number, leaseTtlMs: number, settled = false): boolean {
  const age = nowMs - seenAtMs;
  if (!shared) return age < leaseTtlMs;
  return !settled || age < SETTLED_TTL_MS;
}

/** Pure: how a refusal of this replica's request reads: whose switch, doing what. */
export function describeRemote(ticket: SwitchTicket): string {
  const who = `replica ${ticket.replica ?? '?'}`;
  if (ticket.action === 'unload') return `${who} ${ticket.settled === true ? 'unloaded' : 'is unloading'} ${ticket.model} here`;
  if (ticket.settled === true)
    return `${who} switched the router to ${ticket.model}${ticket.victim === undefined ? '' : ` (unloading ${ticket.victim})`}, this replica's listing catching up`;
  return `${who} is switching the router to ${ticket.model}${ticket.victim === undefined ? '' : ` (unloading ${ticket.victim})`}${ticket.loaded ? ', loaded' : ''}`;
}

/** Pure: a take refused by the store as this replica's claim answer. */
export function answerOf(refusal: SwitchRefusal): Exclude<ClaimAnswer, undefined> {
  return refusal.kind === 'held' ? { kind: 'held', ticket: ticketOfClaim(refusal.claim) } : refusal;
}

interface Remote {
  readonly ticket: SwitchTicket;
  /** The claim's holder (a released one: the holder that released it). */
  readonly holder: string;
  readonly seenAtMs: number;
}

export class SharedSwitches implements SwitchSharing {
  readonly #o: SharedSwitchesOptions;
  readonly #mine = new Map<string, SwitchClaimFields>();
  readonly #remote = new Map<string, Remote>();
  /** Released remote switches this replica's listing caught up with, by node: their record no longer counts. */
  readonly #caught = new Map<string, string>();
  /** Models other replicas use, by node, as a refused claim found them (monotonic ms when marked). */
  readonly #busy = new Map<string, Map<string, number>>();
  /** The latest look started per node: an older answer arriving later is dropped. */
  readonly #looks = new Map<string, number>();
  readonly #run = randomBytes(4).toString('hex');
  #seq = 0;
  #renewTimer: Timer | undefined;
  #pollTimer: Timer | undefined;
  #stopped = false;

  constructor(options: SharedSwitchesOptions) {
    this.#o = options;
    options.store.onSwitch((node) => void this.look(node));
    options.store.onFreed((pair) => this.#freed(pair));
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
    if (
      remoteCounts(
        this.#o.gate.shared(),
        seen.seenAtMs,
        this.#o.clock.monotonicMs(),
        this.#o.leaseTtlMs,
        seen.ticket.settled === true,
      )
    )
      return seen.ticket;
    this.#remote.delete(node);
    return undefined;
  }

  remoteHeld(): readonly (readonly [string, SwitchTicket])[] {
    return [...this.#remote.keys()].flatMap((node) => {
      const ticket = this.remote(node);
      return ticket === undefined ? [] : [[node, ticket] as const];
    });
  }

  async claim(node: string, ticket: SwitchTicket): Promise<ClaimAnswer> {
    this.#seq += 1;
    const claim: SwitchClaimFields = {
      holder: `${this.#o.replica}/${this.#run}/${this.#seq}`,
      replica: this.#o.replica,
      model: ticket.model,
      action: ticket.action,
      by: ticket.by,
      loaded: ticket.loaded,
      victim: ticket.victim,
    };
    if (this.#o.gate.shared()) {
      try {
        const refusal = await this.#o.store.takeSwitch(node, claim);
        if (refusal?.kind === 'held') this.#seen(node, refusal.claim);
        if (refusal?.kind === 'victim_busy') this.#markBusy(node, refusal.victim);
        if (refusal !== undefined) return answerOf(refusal);
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

  busyElsewhere(node: string): ReadonlySet<string> {
    const marks = this.#busy.get(node);
    if (marks === undefined) return new Set();
    const now = this.#o.clock.monotonicMs();
    for (const [model, at] of marks) if (now - at >= fallbackPollMs(this.#o.leaseTtlMs)) marks.delete(model);
    if (marks.size === 0) this.#busy.delete(node);
    return new Set(marks.keys());
  }

  caughtUp(node: string): void {
    const seen = this.#remote.get(node);
    if (seen?.ticket.settled !== true) return;
    // Called while the queues look again (the scheduler's reconcile): nothing more to announce.
    this.#caught.set(node, seen.holder);
    this.#remote.delete(node);
  }

  /** Reads `node`'s claim from the store into the cache; answers what another replica's switch there is doing, if any. */
  async look(node: string): Promise<string | undefined> {
    if (this.#o.gate.shared()) {
      const seq = (this.#looks.get(node) ?? 0) + 1;
      this.#looks.set(node, seq);
      try {
        const claim = await this.#o.store.peekSwitch(node);
        if (this.#looks.get(node) === seq) this.#seen(node, claim);
      } catch (error) {
        this.#o.gate.storeFailed(error);
      }
    }
    const ticket = this.remote(node);
    return ticket === undefined ? undefined : describeRemote(ticket);
  }

  #call(work: Promise<unknown>): void {
    work.catch((error: unknown) => this.#o.gate.storeFailed(error));
  }

  #seen(node: string, claim: SwitchClaimFields | undefined): void {
    const before = this.#remote.get(node)?.ticket;
    const mine = this.#mine.get(node);
    // This replica's own claim (and its released records) are its book's; a record its listing caught up with no longer counts.
    const ignored =
      claim === undefined ||
      claim.holder === mine?.holder ||
      (claim.settled === true && (claim.replica === this.#o.replica || this.#caught.get(node) === claim.holder));
    if (ignored) this.#remote.delete(node);
    else this.#remote.set(node, { ticket: ticketOfClaim(claim), holder: claim.holder, seenAtMs: this.#o.clock.monotonicMs() });
    if (claim?.settled !== true) this.#caught.delete(node);
    const after = this.#remote.get(node)?.ticket;
    if (
      before?.model !== after?.model ||
      before?.loaded !== after?.loaded ||
      before?.replica !== after?.replica ||
      before?.action !== after?.action ||
      before?.settled !== after?.settled
    )
      this.#o.changed(node);
  }

  #markBusy(node: string, model: string): void {
    const marks = this.#busy.get(node) ?? new Map<string, number>();
    marks.set(model, this.#o.clock.monotonicMs());
    this.#busy.set(node, marks);
  }

  /** A slot of (node, model) came free somewhere: a model marked busy elsewhere may be idle now. */
  #freed(pair: Pair): void {
    const marks = this.#busy.get(pair.node);
    if (marks?.delete(pair.model) !== true) return;
    if (marks.size === 0) this.#busy.delete(pair.node);
    this.#o.changed(pair.node);
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

  /** A lost announcement costs one poll: the nodes with a remote claim cached (or a model marked busy elsewhere) are looked at again. */
  #schedulePoll(): void {
    if (this.#stopped) return;
    this.#pollTimer = this.#o.clock.setTimeout(() => {
      for (const node of [...this.#busy.keys()]) {
        const before = this.#busy.get(node)?.size ?? 0;
        if (this.busyElsewhere(node).size < before) this.#o.changed(node);
      }
      const nodes = [...this.#remote.keys()];
      if (nodes.length === 0 || !this.#o.gate.shared()) {
        for (const node of nodes) if (this.remote(node) === undefined) this.#o.changed(node);
        this.#schedulePoll();
        return;
      }
      void Promise.all(nodes.map((node) => this.look(node))).finally(() => this.#schedulePoll());
    }, fallbackPollMs(this.#o.leaseTtlMs));
  }
}
