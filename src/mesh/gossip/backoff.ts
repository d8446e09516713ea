// When to redial a bootstrap peer after a failed dial or a dropped connection (pure).

export interface BackoffPolicy {
  /** The first delay, before jitter. */
  readonly baseMs: number;
  /** No delay is longer than this. */
  readonly maxMs: number;
}

/** 0.5 s, doubling, up to 30 s: a restarted site is found again within a second or two. */
export const DEFAULT_REDIAL: BackoffPolicy = Object.freeze({ baseMs: 500, maxMs: 30_000 });

/**
 * The delay before redial number `attempt` (0 = the first after a drop): base × 2^attempt, capped,
 * then "equal jitter" — a uniform draw in [d/2, d) — so sites that lost a peer at the same moment
 * do not redial it in lockstep, while the delay still grows.
 */
export function redialDelayMs(attempt: number, policy: BackoffPolicy, random: () => number): number {
  const exponent = Math.min(Math.max(0, Math.floor(attempt)), 30);
  const capped = Math.min(policy.maxMs, policy.baseMs * 2 ** exponent);
  const r = Math.min(Math.max(random(), 0), 1);
  return Math.round(capped / 2 + (r * capped) / 2);
}
