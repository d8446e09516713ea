// Refresh-on-miss: a request for a model no node is known to serve re-lists the nodes whose answer
// could change (nodesWorthRefreshing), and waits for those listings at most `waitMs` before it is
// answered from what routing knows. Per-node rate limiting stays with the discoverer
// (discovery.miss_cooldown), which skips a node re-listed too recently.

import type { Clock } from '#src/core/clock.ts';
import { filterCandidates, nodesWorthRefreshing, type Filter, type RouteRequest } from '#src/routing/index.ts';
import type { SchedulerEffects } from './effects.ts';

export interface MissRefresh {
  readonly clock: Clock;
  readonly effects: SchedulerEffects;
  readonly filters: readonly Filter[];
  readonly waitMs: number;
}

/** Resolves true when the listings came back in time and routing again is worth it. */
export function refreshOnMiss(req: RouteRequest, miss: MissRefresh): Promise<boolean> {
  const { excluded } = filterCandidates(req, miss.effects.snapshot(), miss.filters);
  const names = nodesWorthRefreshing(excluded);
  if (names.length === 0) return Promise.resolve(false);
  // A failed re-listing is reported, never left as an unhandled rejection; the request goes on.
  const refreshed = miss.effects.refreshListings(names).then(
    () => undefined,
    (error: unknown) => miss.effects.notify({ kind: 'refresh-failed', error }),
  );
  if (miss.waitMs <= 0) return Promise.resolve(false);
  return new Promise<boolean>((resolve) => {
    const timer = miss.clock.setTimeout(() => resolve(false), miss.waitMs);
    void refreshed.then(() => {
      timer.cancel();
      resolve(true);
    });
  });
}
