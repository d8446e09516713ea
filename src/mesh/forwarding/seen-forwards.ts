// A forwarded request's signature is good once. Each signature carries a random `nonce`; the
// receiving site remembers every (site, nonce) it served until that signature could no longer be
// accepted anyway (min(expires, created + max_clock_skew)), and refuses a second use as `replayed`.
// A forward is checked here when its head is verified (`check`: a replay is refused before its body
// is read) and its signature is used up only once its site's tenant limits admitted it (`claim`,
// atomic: of two copies racing, one wins): a forward refused for its limits costs no entry.
// The memory is bounded and split: each pinned site has its own share (replay-window.ts); a site
// whose share is full has its own new forwards refused (429, retry later) rather than an entry
// forgotten early — a forgotten entry could be replayed — and no other site's forwards are touched.
// Signatures an earlier run could have accepted (their window opened before this memory began,
// replay-window.ts) are refused as well. With `[server] workers` > 1 one memory serves every worker:
// the owner thread holds it and the workers ask it (src/workers/replay-claims.ts), since a replay
// may reach another thread.

import { acceptanceWindow, earlierRunCouldAccept, firstAcceptedCreatedMs, replayShare } from './replay-window.ts';

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

/** How the verifier asks about a signature's one use: in this thread, or by asking the owner thread. */
export interface ReplayGuard {
  /** Whether the signature may be used (not a replay, room in its site's share); records nothing. */
  check(claim: ForwardClaim): ClaimVerdict | Promise<ClaimVerdict>;
  /** Records the signature's one use, or says why not (the same rules as `check`, atomically). */
  claim(claim: ForwardClaim): ClaimVerdict | Promise<ClaimVerdict>;
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
}

export class SeenForwards {
  /** site → nonce → until when it is remembered (wall-clock ms). */
  readonly #seen = new Map<string, Map<string, number>>();
  readonly #sinceMs: number;
  readonly #capacity: () => number;
  readonly #remoteSites: () => number;
  #nextSweepMs = 0;

  /** `sinceMs`: when this memory began (wall-clock ms); a signature an earlier run could have accepted is refused. */
  constructor(sinceMs: number, options: SeenForwardsOptions = {}) {
    this.#sinceMs = sinceMs;
    const capacity = options.capacity ?? MAX_REMEMBERED_FORWARDS;
    this.#capacity = typeof capacity === 'number' ? () => capacity : capacity;
    this.#remoteSites = options.remoteSites ?? (() => 1);
  }

  /** Whether `claim` may be used at `nowMs`; records nothing. */
  check(claim: ForwardClaim, nowMs: number): ClaimVerdict {
    if (earlierRunCouldAccept(claim, this.#sinceMs)) {
      const skewMs = claim.createdMs - claim.fromMs;
      const from = new Date(firstAcceptedCreatedMs(this.#sinceMs, skewMs)).toISOString();
      return {
        ok: false,
        rejection: 'replayed',
        detail: `acceptable from ${Math.round((this.#sinceMs - claim.fromMs) / 1000)} s before this site started: an earlier run may have accepted it (signatures created from ${from} on are taken)`,
      };
    }
    this.#sweep(nowMs);
    const site = this.#seen.get(claim.site);
    const until = site?.get(claim.nonce);
    if (until !== undefined && until >= nowMs) return { ok: false, rejection: 'replayed', detail: `signature nonce '${claim.nonce}' from '${claim.site}' was already used` };
    const capacity = this.#capacity();
    const sites = Math.max(1, this.#remoteSites());
    const share = this.share();
    if (until === undefined && site !== undefined && site.size >= share) {
      this.#sweep(nowMs, true);
      if (site.size >= share) {
        const retry = Math.max(1, Math.ceil((earliest(site) - nowMs) / 1000));
        return {
          ok: false,
          rejection: 'replay_memory_full',
          detail: `site '${claim.site}' has ${site.size} forwarded requests remembered for replay checks, its share of the ${capacity} ([mesh] max_remembered_forwards, split over ${sites} pinned sites)`,
          retryAfterSeconds: retry,
        };
      }
    }
    return { ok: true };
  }

  /** Records the claim's one use at `nowMs`, or says why it is refused. */
  claim(claim: ForwardClaim, nowMs: number): ClaimVerdict {
    const verdict = this.check(claim, nowMs);
    if (!verdict.ok) return verdict;
    let site = this.#seen.get(claim.site);
    if (site === undefined) {
      site = new Map();
      this.#seen.set(claim.site, site);
    }
    site.set(claim.nonce, claim.untilMs);
    return verdict;
  }

  /** Signatures remembered now, by site (sites with none left out). */
  remembered(): ReadonlyMap<string, number> {
    return new Map([...this.#seen].map(([site, entries]) => [site, entries.size]));
  }

  /** How many signatures each site may have remembered at once now. */
  share(): number {
    return replayShare(this.#capacity(), this.#remoteSites());
  }

  /** Signatures remembered now: of one site, or of all. */
  size(site?: string): number {
    if (site !== undefined) return this.#seen.get(site)?.size ?? 0;
    let total = 0;
    for (const entries of this.#seen.values()) total += entries.size;
    return total;
  }

  #sweep(nowMs: number, force = false): void {
    if (!force && nowMs < this.#nextSweepMs) return;
    this.#nextSweepMs = nowMs + SWEEP_EVERY_MS;
    for (const [site, entries] of this.#seen) {
      for (const [nonce, until] of entries) if (until < nowMs) entries.delete(nonce);
      if (entries.size === 0) this.#seen.delete(site);
    }
  }
}

function earliest(entries: ReadonlyMap<string, number>): number {
  let first = Number.POSITIVE_INFINITY;
  for (const until of entries.values()) first = Math.min(first, until);
  return first;
}

export interface LocalReplayOptions extends SeenForwardsOptions {
  /** When this memory began (wall-clock ms); absent = now. */
  readonly sinceMs?: number;
}

/** The guard of a gateway whose request path runs in this thread: one memory, from `sinceMs`. */
export function localReplayGuard(now: () => number, options: LocalReplayOptions = {}): ReplayGuard & { readonly seen: SeenForwards } {
  const seen = new SeenForwards(options.sinceMs ?? now(), options);
  return { seen, check: (claim) => seen.check(claim, now()), claim: (claim) => seen.claim(claim, now()) };
}

/** The claim of a verified signature: its window at a receiver allowing `skewMs` (replay-window.ts). */
export function claimFor(site: string, nonce: string, createdMs: number, expiresMs: number, skewMs: number): ForwardClaim {
  const window = acceptanceWindow(createdMs, expiresMs, skewMs);
  return { site, nonce, createdMs, fromMs: window.fromMs, untilMs: window.untilMs };
}
