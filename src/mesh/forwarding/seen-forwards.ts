// A forwarded request's signature is good once. Each signature carries a random `nonce`; the
// receiving site remembers every (site, nonce) it served until that signature could no longer be
// accepted anyway (min(expires, created + max_clock_skew)), and refuses a second use as `replayed`.
// A forward's signature is held when its head is verified (`hold`: a replay, or a second copy in
// flight, is refused before its body is read) and used up only once its site's tenant limits
// admitted it (`claim`); a forward refused before that lets go of it (`release`) and costs no entry.
// The memory is bounded and split: each pinned site has its own share (replay-window.ts); a site
// whose share is full has its own new forwards refused (429, retry later) rather than an entry
// forgotten early — a forgotten entry could be replayed — and no other site's forwards are touched.
// Signatures an earlier run could have accepted (their window opened before this memory began,
// replay-window.ts) are refused as well — unless the run before stopped cleanly and left its
// memory (replay-record.ts): then this memory starts with it (`open`) and refuses those alone. A
// memory kept across restarts takes no forward until it was restored (`starting`) nor after its
// record was taken at stop (`seal`): what it saves is all it ever accepted. With `[server] workers` > 1 one memory serves every worker:
// the owner thread holds it and the workers ask it (src/mesh/crossing/replay-claims.ts), since a replay
// may reach another thread.

import { acceptanceWindow, earlierRunCouldAccept, firstAcceptedCreatedMs, replayShare } from './replay-window.ts';
import type { CarriedMemory } from './replay-record.ts';

/** One verified signature, as the verifier states it (plain data: it crosses to the owner thread). */
export interface ForwardClaim {
  readonly site: string;
  readonly nonce: string;
  /** The signature's `created`, wall-clock ms. */
  readonly createdMs: number;
  /** When the signature could first be accepted (created - max_clock_skew, wall-clock ms). */
  readonly fromMs: number;
  /** Until when the signature could be accepted (wall-clock ms): it is remembered that long. */
  readonly untilMs: number;
}

export type ClaimVerdict =
  | { readonly ok: true }
  | {
      readonly ok: false;
      /** `replay_memory_full`: the site's share is full; `replay_unavailable`: the memory did not answer (a worker's wait). */
      readonly rejection: 'replayed' | 'replay_memory_full' | 'replay_unavailable';
      readonly detail: string;
      /** When to try again (the memory full or not answering). */
      readonly retryAfterSeconds?: number;
    };

/** How the request path asks about a signature's one use: in this thread, or by asking the owner thread. */
export interface ReplayGuard {
  /** At the head: whether the signature may be used (not used, not in flight, room in its site's share); if so it is held for this request. */
  hold(claim: ForwardClaim): ClaimVerdict | Promise<ClaimVerdict>;
  /** Once admitted: uses the held signature (remembered until it lapses), or says why not. */
  claim(claim: ForwardClaim): ClaimVerdict | Promise<ClaimVerdict>;
  /** Lets go of a held signature its request did not use (refused before, or ended). */
  release(claim: ForwardClaim): void;
}

/** A guard's operations by name (a worker asks the owner thread's guard for one). */
export type ReplayOp = 'hold' | 'claim' | 'release';

/** Runs `op` on `guard` (a release answers ok). */
export function replayOp(guard: ReplayGuard, claim: ForwardClaim, op: ReplayOp): ClaimVerdict | Promise<ClaimVerdict> {
  if (op === 'release') {
    guard.release(claim);
    return { ok: true };
  }
  return op === 'hold' ? guard.hold(claim) : guard.claim(claim);
}

/** `[mesh] max_remembered_forwards`' default, all sites together (docs/security.md, limits): ~10 MB, ~2,000 forwards/s at the default 30 s skew. */
export const MAX_REMEMBERED_FORWARDS = 65_536;
/** How often expired entries are swept out (a full pass over the memory). */
const SWEEP_EVERY_MS = 1_000;

export interface SeenForwardsOptions {
  /** All sites' entries together (`[mesh] max_remembered_forwards`, re-read per claim: a reload applies it). */
  readonly capacity?: number | (() => number);
  /** How many remote sites are pinned now (re-read per claim: a reload changes the shares). */
  readonly remoteSites?: () => number;
  /** The memory is kept across restarts: it takes no forward until `open` (absent = open at once). */
  readonly starting?: boolean;
}

/** A signature in the memory: used (served), or held by the one request in flight that may use it. */
interface Entry {
  /** Until when it could be accepted (wall-clock ms): it is kept that long. */
  readonly untilMs: number;
  held: boolean;
}

export class SeenForwards {
  /** site → nonce → its entry. */
  readonly #seen = new Map<string, Map<string, Entry>>();
  /** When this process's memory began (wall-clock ms). */
  readonly #startedMs: number;
  /** A signature whose window opened before this is refused wholesale (this start, or the floor carried in). */
  #sinceMs: number;
  /** `starting`: not restored yet; `stopped`: its record was taken at stop. Neither takes a forward. */
  #phase: 'starting' | 'open' | 'stopped';
  readonly #capacity: () => number;
  readonly #remoteSites: () => number;
  #nextSweepMs = 0;

  /** `sinceMs`: when this memory began (wall-clock ms); a signature an earlier run could have accepted is refused. */
  constructor(sinceMs: number, options: SeenForwardsOptions = {}) {
    this.#startedMs = sinceMs;
    this.#sinceMs = sinceMs;
    this.#phase = options.starting === true ? 'starting' : 'open';
    const capacity = options.capacity ?? MAX_REMEMBERED_FORWARDS;
    this.#capacity = typeof capacity === 'number' ? () => capacity : capacity;
    this.#remoteSites = options.remoteSites ?? (() => 1);
  }

  /**
   * Whether `claim` may be used at `nowMs`: not used, not held by a request in flight, and room in
   * its site's share. If so it is held for the asking request (until `claim` uses it or `release`
   * lets it go; at the latest until it lapses): a second copy in flight is refused at once.
   */
  hold(claim: ForwardClaim, nowMs: number): ClaimVerdict {
    if (this.#phase !== 'open') {
      const detail =
        this.#phase === 'starting'
          ? 'this site is starting: its memory of used signatures is not restored yet'
          : 'this site is stopping: its memory of used signatures is saved';
      return { ok: false, rejection: 'replay_unavailable', detail, retryAfterSeconds: 1 };
    }
    if (earlierRunCouldAccept(claim, this.#sinceMs)) {
      const skewMs = claim.createdMs - claim.fromMs;
      const from = new Date(firstAcceptedCreatedMs(this.#sinceMs, skewMs)).toISOString();
      const before =
        this.#sinceMs === this.#startedMs
          ? 'this site started'
          : `${new Date(this.#sinceMs).toISOString()}, where this site's memory of used signatures begins`;
      return {
        ok: false,
        rejection: 'replayed',
        detail: `acceptable from ${Math.round((this.#sinceMs - claim.fromMs) / 1000)} s before ${before}: an earlier run may have accepted it (signatures created from ${from} on are taken)`,
      };
    }
    this.#sweep(nowMs);
    const site = this.#site(claim.site);
    const entry = site.get(claim.nonce);
    if (entry !== undefined && entry.untilMs >= nowMs) {
      const detail = entry.held ? 'is being used by another request now' : 'was already used';
      return { ok: false, rejection: 'replayed', detail: `signature nonce '${claim.nonce}' from '${claim.site}' ${detail}` };
    }
    const share = this.share();
    if (entry === undefined && site.size >= share) {
      this.#sweep(nowMs, true);
      if (site.size >= share) {
        const retry = Math.max(1, Math.ceil((earliest(site) - nowMs) / 1000));
        return {
          ok: false,
          rejection: 'replay_memory_full',
          detail: `site '${claim.site}' has ${site.size} forwarded requests remembered for replay checks, its share of the ${this.#capacity()} ([mesh] max_remembered_forwards, split over ${Math.max(1, this.#remoteSites())} pinned sites)`,
          retryAfterSeconds: retry,
        };
      }
    }
    site.set(claim.nonce, { untilMs: claim.untilMs, held: true });
    return { ok: true };
  }

  /** Uses the claim at `nowMs` (held before, or held now): remembered until it lapses; or says why not. */
  claim(claim: ForwardClaim, nowMs: number): ClaimVerdict {
    const entry = this.#seen.get(claim.site)?.get(claim.nonce);
    if (entry?.held === true) {
      entry.held = false;
      return { ok: true };
    }
    const verdict = this.hold(claim, nowMs);
    if (verdict.ok) return this.claim(claim, nowMs);
    return verdict;
  }

  /** Lets go of a held claim that was not used (its request was refused before, or ended). */
  release(claim: ForwardClaim): void {
    const site = this.#seen.get(claim.site);
    if (site?.get(claim.nonce)?.held === true) site.delete(claim.nonce);
  }

  /**
   * Starts taking forwards. `carried`: the memory the run before left at a clean stop — its
   * signatures still open are remembered here as used, and only windows that opened before its
   * floor are refused wholesale; absent: every window that opened before this memory began is.
   */
  open(nowMs: number, carried?: CarriedMemory): void {
    if (this.#phase !== 'starting') return;
    if (carried !== undefined) {
      this.#sinceMs = Math.min(this.#sinceMs, carried.refusedBeforeMs);
      for (const [id, entries] of carried.used) {
        const site = this.#site(id);
        for (const [nonce, untilMs] of entries)
          if (untilMs >= nowMs && !site.has(nonce)) site.set(nonce, { untilMs, held: false });
        if (site.size === 0) this.#seen.delete(id);
      }
    }
    this.#phase = 'open';
  }

  /**
   * Stops taking forwards (a request holding a signature may still use it) and answers what the
   * next run must refuse: every signature used or held whose window is still open at `nowMs`, and
   * the floor. Undefined when the memory never opened (it accepted nothing) or was sealed before.
   */
  seal(nowMs: number): CarriedMemory | undefined {
    if (this.#phase !== 'open') {
      this.#phase = 'stopped';
      return undefined;
    }
    this.#phase = 'stopped';
    const used = new Map<string, Map<string, number>>();
    for (const [id, entries] of this.#seen) {
      const open = new Map<string, number>();
      for (const [nonce, entry] of entries) if (entry.untilMs >= nowMs) open.set(nonce, entry.untilMs);
      if (open.size > 0) used.set(id, open);
    }
    return { refusedBeforeMs: this.#sinceMs, used };
  }

  /** Signatures used and remembered now, by site (sites with none left out). */
  remembered(): ReadonlyMap<string, number> {
    const counts = new Map<string, number>();
    for (const [site, entries] of this.#seen) {
      let used = 0;
      for (const entry of entries.values()) if (!entry.held) used += 1;
      if (used > 0) counts.set(site, used);
    }
    return counts;
  }

  /** How many signatures each site may have remembered (used or held) at once now. */
  share(): number {
    return replayShare(this.#capacity(), this.#remoteSites());
  }

  /** Signatures in the memory now (used or held): of one site, or of all. */
  size(site?: string): number {
    if (site !== undefined) return this.#seen.get(site)?.size ?? 0;
    let total = 0;
    for (const entries of this.#seen.values()) total += entries.size;
    return total;
  }

  #site(id: string): Map<string, Entry> {
    let site = this.#seen.get(id);
    if (site === undefined) {
      site = new Map();
      this.#seen.set(id, site);
    }
    return site;
  }

  #sweep(nowMs: number, force = false): void {
    if (!force && nowMs < this.#nextSweepMs) return;
    this.#nextSweepMs = nowMs + SWEEP_EVERY_MS;
    for (const [site, entries] of this.#seen) {
      for (const [nonce, entry] of entries) if (entry.untilMs < nowMs) entries.delete(nonce);
      if (entries.size === 0) this.#seen.delete(site);
    }
  }
}

function earliest(entries: ReadonlyMap<string, Entry>): number {
  let first = Number.POSITIVE_INFINITY;
  for (const entry of entries.values()) first = Math.min(first, entry.untilMs);
  return first;
}

export interface LocalReplayOptions extends SeenForwardsOptions {
  /** When this memory began (wall-clock ms); absent = now. */
  readonly sinceMs?: number;
}

/** The guard of a gateway whose request path runs in this thread: one memory, from `sinceMs`. */
export function localReplayGuard(
  now: () => number,
  options: LocalReplayOptions = {},
): ReplayGuard & { readonly seen: SeenForwards } {
  const seen = new SeenForwards(options.sinceMs ?? now(), options);
  return {
    seen,
    hold: (claim) => seen.hold(claim, now()),
    claim: (claim) => seen.claim(claim, now()),
    release: (claim) => seen.release(claim),
  };
}

/** The claim of a verified signature: its window at a receiver allowing `skewMs` (replay-window.ts). */
export function claimFor(site: string, nonce: string, createdMs: number, expiresMs: number, skewMs: number): ForwardClaim {
  const window = acceptanceWindow(createdMs, expiresMs, skewMs);
  return { site, nonce, createdMs, fromMs: window.fromMs, untilMs: window.untilMs };
}
