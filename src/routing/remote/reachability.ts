// Which remote sites are in back-off after a forward failed before its first byte (connection
// refused, timed out, 5xx). Pure transitions over plain data, plus a small holder for the request
// path: a failure starts a back-off (doubling up to a cap), a success clears it.

export interface BackoffPolicy {
  readonly initialMs: number;
  readonly maxMs: number;
}

export const DEFAULT_SITE_BACKOFF: BackoffPolicy = { initialMs: 2_000, maxMs: 30_000 };

export interface SiteDown {
  /** Monotonic ms until which the site is skipped. */
  readonly untilMs: number;
  /** The back-off that produced `untilMs` (the next failure doubles it). */
  readonly backoffMs: number;
  readonly detail: string;
}

export type Reachability = ReadonlyMap<string, SiteDown>;

/** A forward to `site` failed before its first byte at `nowMs`. */
export function markFailed(
  state: Reachability,
  site: string,
  nowMs: number,
  detail: string,
  policy: BackoffPolicy,
): Reachability {
  const prior = state.get(site);
  const backoffMs = prior === undefined ? policy.initialMs : Math.min(policy.maxMs, prior.backoffMs * 2);
  return new Map(state).set(site, { untilMs: nowMs + backoffMs, backoffMs, detail });
}

/** A forward to `site` got an answer: it is reachable again. */
export function markReached(state: Reachability, site: string): Reachability {
  if (!state.has(site)) return state;
  const next = new Map(state);
  next.delete(site);
  return next;
}

/** The sites to skip now, each with why (what failed, and for how much longer). */
export function unreachableAt(state: Reachability, nowMs: number): Map<string, string> {
  const out = new Map<string, string>();
  for (const [site, down] of state) {
    if (down.untilMs > nowMs) out.set(site, `${down.detail} (retry in ${Math.ceil((down.untilMs - nowMs) / 1000)} s)`);
  }
  return out;
}

/** A site went from reachable to backing off (with what failed), or answered again. */
export type ReachabilityChange = (site: string, reachable: boolean, detail: string | undefined) => void;

/** The request path's holder of the state; the clock is the caller's monotonic one. */
export class SiteReachability {
  #state: Reachability = new Map();
  readonly #policy: BackoffPolicy;
  readonly #nowMs: () => number;
  readonly #onChange: ReachabilityChange;

  constructor(nowMs: () => number, onChange: ReachabilityChange = () => {}, policy: BackoffPolicy = DEFAULT_SITE_BACKOFF) {
    this.#nowMs = nowMs;
    this.#onChange = onChange;
    this.#policy = policy;
  }

  failed(site: string, detail: string): void {
    const wasDown = this.#state.has(site);
    this.#state = markFailed(this.#state, site, this.#nowMs(), detail, this.#policy);
    if (!wasDown) this.#onChange(site, false, detail);
  }

  reached(site: string): void {
    const next = markReached(this.#state, site);
    if (next === this.#state) return;
    this.#state = next;
    this.#onChange(site, true, undefined);
  }

  unreachable(): Map<string, string> {
    return unreachableAt(this.#state, this.#nowMs());
  }
}
