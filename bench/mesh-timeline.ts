// Cold-start convergence read from the gateways' own logs, not by polling them: every site logs
// each freshness transition of every other site ("mesh site fresh" / "mesh site stale", each
// stamped with its own clock), so the moment every site held every other fresh is known to the
// millisecond without a request. Polling /admin/sites of 32 gateways every 100 ms was itself
// hundreds of requests a second on the 2-core machine it measured. The benchmark then asks every
// site once (/admin/sites) whether it still sees every other fresh, and reports how many do: a
// stale transition is logged by a timer, which a starved process may run late.

/** One freshness transition a site logged about another (epoch ms by the logging process). */
export interface FreshnessTransition {
  readonly at: number;
  readonly observer: string;
  readonly site: string;
  readonly fresh: boolean;
}

/** The transitions and the "gateway listening" moment in one site's JSON log lines. */
export function readSiteLog(
  observer: string,
  lines: readonly string[],
): { readonly transitions: FreshnessTransition[]; readonly listeningAt: number | undefined } {
  const transitions: FreshnessTransition[] = [];
  let listeningAt: number | undefined;
  for (const line of lines) {
    // Cheap test first: most lines are neither.
    const fresh = line.includes('"mesh site fresh"');
    const stale = !fresh && line.includes('"mesh site stale');
    const listening = !fresh && !stale && line.includes('"gateway listening"');
    if (!fresh && !stale && !listening) continue;
    let entry: unknown;
    try {
      entry = JSON.parse(line);
    } catch {
      continue;
    }
    if (typeof entry !== 'object' || entry === null || !('time' in entry) || typeof entry.time !== 'number') continue;
    if (listening) listeningAt = entry.time;
    else if ('site' in entry && typeof entry.site === 'string')
      transitions.push({ at: entry.time, observer, site: entry.site, fresh });
  }
  return { transitions, listeningAt };
}

/**
 * Pure: for each of `sites`, the first moment it held every other site fresh (epoch ms), replaying
 * the transitions in time order; a site that never did is absent. The cold-start figure is the
 * latest of these: the moment the last site first saw every other fresh (as the polling before
 * measured it, at a resolution of one millisecond instead of a poll interval).
 */
export function firstComplete(
  sites: readonly string[],
  transitions: readonly FreshnessTransition[],
): ReadonlyMap<string, number> {
  const need = sites.length - 1;
  const fresh = new Map(sites.map((s) => [s, new Set<string>()] as const));
  const first = new Map<string, number>();
  for (const t of [...transitions].sort((a, b) => a.at - b.at)) {
    const held = fresh.get(t.observer);
    if (held === undefined || t.site === t.observer) continue;
    if (t.fresh) held.add(t.site);
    else held.delete(t.site);
    if (held.size === need && !first.has(t.observer)) first.set(t.observer, t.at);
  }
  return first;
}

/** How many others each site holds fresh after all `transitions` (for a timeout's report). */
export function freshCounts(sites: readonly string[], transitions: readonly FreshnessTransition[]): ReadonlyMap<string, number> {
  const fresh = new Map(sites.map((s) => [s, new Set<string>()] as const));
  for (const t of [...transitions].sort((a, b) => a.at - b.at)) {
    const held = fresh.get(t.observer);
    if (held === undefined || t.site === t.observer) continue;
    if (t.fresh) held.add(t.site);
    else held.delete(t.site);
  }
  return new Map([...fresh].map(([s, held]) => [s, held.size]));
}
