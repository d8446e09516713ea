// Pure freshness: a remote site's set is fresh while the receiver accepted a newer revision within
// `[mesh] freshness`, by the receiver's own monotonic clock (never the sender's issued_at, so a
// sender's wall clock cannot keep itself fresh). Stale fails closed: routing skips the site.

/** Fresh when a record was accepted and no more than `freshnessMs` ago. */
export function isFresh(acceptedAtMs: number | undefined, nowMs: number, freshnessMs: number): boolean {
  return acceptedAtMs !== undefined && nowMs - acceptedAtMs <= freshnessMs;
}

export interface FreshnessChange {
  readonly site: string;
  readonly fresh: boolean;
}

/**
 * The sites whose freshness differs from what was last reported. A site never reported before is
 * reported only when fresh (a pinned site that was never heard of starts stale without a log line).
 */
export function freshnessChanges(reported: ReadonlyMap<string, boolean>, now: ReadonlyMap<string, boolean>): FreshnessChange[] {
  const changes: FreshnessChange[] = [];
  for (const [site, fresh] of now) {
    const before = reported.get(site);
    if (before === undefined ? fresh : before !== fresh) changes.push({ site, fresh });
  }
  return changes;
}

/** When the next freshness check is due: the earliest moment a fresh site turns stale. */
export function nextExpiry(acceptedAt: Iterable<number | undefined>, nowMs: number, freshnessMs: number): number | undefined {
  let earliest: number | undefined;
  for (const at of acceptedAt) {
    if (at === undefined || !isFresh(at, nowMs, freshnessMs)) continue;
    const expires = at + freshnessMs + 1;
    earliest = earliest === undefined ? expires : Math.min(earliest, expires);
  }
  return earliest;
}
