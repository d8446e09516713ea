// Pure: the workers' upstream connection figures summed with the owner's own, per node, for
// /admin/runtime and the gateway_upstream_* gauges (each worker has its own connection pools).

import type { PoolFigures } from '#src/proxy/index.ts';

export function sumPoolFigures(all: readonly Readonly<Record<string, PoolFigures>>[]): Record<string, PoolFigures> {
  const out: Record<string, PoolFigures> = {};
  for (const figures of all) {
    for (const [node, f] of Object.entries(figures)) {
      const sum = out[node];
      out[node] =
        sum === undefined
          ? { ...f }
          : {
              limit: sum.limit + f.limit,
              connected: sum.connected + f.connected,
              running: sum.running + f.running,
              pending: sum.pending + f.pending,
              saturated: sum.saturated || f.saturated,
            };
    }
  }
  return out;
}
