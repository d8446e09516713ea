// A forwarded request's signature is good once. Each signature carries a random `nonce`; the
// receiving site remembers every (site, nonce) it accepted until that signature could no longer be
// accepted anyway (min(expires, created + max_clock_skew)), and refuses a second use as `replayed`.
// The memory is bounded: when it is full a new forward is refused (503, retry later) rather than an
// entry forgotten early — a forgotten entry could be replayed. Signatures made before this memory
// began (the gateway's start: an earlier process may have accepted them) are refused as well.
// With `[server] workers` > 1 one memory serves every worker: the owner thread holds it and the
// workers ask it (src/workers/replay-claims.ts), since a replay may reach another thread.

/** One accepted signature, as the verifier states it (plain data: it crosses to the owner thread). */
export interface ForwardClaim {
  readonly site: string;
  readonly nonce: string;
  /** The signature's `created`, wall-clock ms. */
  readonly createdMs: number;
  /** Until when the signature could be accepted (wall-clock ms): it is remembered that long. */
  readonly untilMs: number;
}

export type ClaimVerdict =
  | { readonly ok: true }
  | { readonly ok: false; readonly rejection: 'replayed' | 'replay_memory_full'; readonly detail: string; /** For `replay_memory_full`: when to try again. */ readonly retryAfterSeconds?: number };

/** How the verifier records a signature's one use: in this thread, or by asking the owner thread. */
export interface ReplayGuard {
  claim(claim: ForwardClaim): ClaimVerdict | Promise<ClaimVerdict>;
}

/** Accepted signatures held at most (docs/security.md, limits): ~10 MB, ~2,000 forwards/s at the default 30 s skew. */
export const MAX_REMEMBERED_FORWARDS = 65_536;
/** How often expired entries are swept out (a full pass over the memory). */
const SWEEP_EVERY_MS = 1_000;

export class SeenForwards {
  /** `site\nnonce` → until when it is remembered (wall-clock ms). */
  readonly #seen = new Map<string, number>();
  readonly #sinceMs: number;
  readonly #capacity: number;
  #nextSweepMs = 0;

  /** `sinceMs`: when this memory began (wall-clock ms); a signature created before that second is refused. */
  constructor(sinceMs: number, capacity: number = MAX_REMEMBERED_FORWARDS) {
    this.#sinceMs = sinceMs;
    this.#capacity = capacity;
  }

  /** Records the claim's one use at `nowMs`, or says why it is refused. */
  claim(claim: ForwardClaim, nowMs: number): ClaimVerdict {
    // `created` has whole seconds: a signature from the second this memory began is still taken.
    if (claim.createdMs < Math.floor(this.#sinceMs / 1000) * 1000) {
      return { ok: false, rejection: 'replayed', detail: `signed ${Math.round((this.#sinceMs - claim.createdMs) / 1000)} s before this site started: an earlier run may have accepted it` };
    }
    const key = `${claim.site}\n${claim.nonce}`;
    this.#sweep(nowMs);
    const until = this.#seen.get(key);
    if (until !== undefined && until >= nowMs) return { ok: false, rejection: 'replayed', detail: `signature nonce '${claim.nonce}' from '${claim.site}' was already used` };
    if (until === undefined && this.#seen.size >= this.#capacity) {
      this.#sweep(nowMs, true);
      if (this.#seen.size >= this.#capacity) {
        const retry = Math.max(1, Math.ceil((this.#earliestUntil() - nowMs) / 1000));
        return { ok: false, rejection: 'replay_memory_full', detail: `${this.#capacity} forwarded requests are remembered for replay checks already`, retryAfterSeconds: retry };
      }
    }
    this.#seen.set(key, claim.untilMs);
    return { ok: true };
  }

  /** Signatures remembered now. */
  size(): number {
    return this.#seen.size;
  }

  #sweep(nowMs: number, force = false): void {
    if (!force && nowMs < this.#nextSweepMs) return;
    this.#nextSweepMs = nowMs + SWEEP_EVERY_MS;
    for (const [key, until] of this.#seen) if (until < nowMs) this.#seen.delete(key);
  }

  #earliestUntil(): number {
    let earliest = Number.POSITIVE_INFINITY;
    for (const until of this.#seen.values()) earliest = Math.min(earliest, until);
    return earliest;
  }
}

/** The guard of a gateway whose request path runs in this thread: one memory, from `sinceMs`. */
export function localReplayGuard(now: () => number, sinceMs: number = now()): ReplayGuard & { readonly seen: SeenForwards } {
  const seen = new SeenForwards(sinceMs);
  return { seen, claim: (claim) => seen.claim(claim, now()) };
}
