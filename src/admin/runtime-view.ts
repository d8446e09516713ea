// GET /admin/runtime's document: the process (memory, uptime), the requests in flight, the leases,
// the queues, the upstream connections (per node, per remote site with [mesh]), the answer bytes
// held, each request worker's figures ([server] workers > 1) and the features' own figures (e.g.
// [cluster]'s `cluster`), read when asked.

import type { PoolFigures } from '#src/proxy/index.ts';

export interface RuntimeSources {
  /** Requests the HTTP listeners are answering right now. */
  readonly activeRequests: () => number;
  readonly leasesInFlight: () => number;
  readonly retiringInFlight: () => number;
  readonly queueDepths: () => Record<string, number>;
  readonly upstream: () => Record<string, PoolFigures>;
  /** Connections per remote site; undefined without [mesh]. */
  readonly upstreamSites: () => Record<string, PoolFigures> | undefined;
  readonly heldBytes: () => number;
  /** Each request worker's figures; absent with one thread. */
  readonly workers?: (() => readonly unknown[]) | undefined;
  /** The features' figures, laid beside these. */
  readonly features: () => Readonly<Record<string, unknown>>;
}

export function runtimeView(s: RuntimeSources): Record<string, unknown> {
  const memory = process.memoryUsage();
  const sites = s.upstreamSites();
  return {
    rss_bytes: memory.rss,
    heap_used_bytes: memory.heapUsed,
    uptime_seconds: Math.round(process.uptime()),
    active_requests: s.activeRequests(),
    leases_in_flight: s.leasesInFlight(),
    retiring_in_flight: s.retiringInFlight(),
    queue_depth: s.queueDepths(),
    upstream: s.upstream(),
    ...(sites === undefined ? {} : { upstream_sites: sites }),
    upstream_held_bytes: s.heldBytes(),
    ...(s.workers === undefined ? {} : { workers: s.workers() }),
    ...s.features(),
  };
}
