// What the hosts of the request plane give the owner's parts: their figures (the main thread's one
// plane with `workers = 1`, else every worker's), summed for /admin/runtime and /metrics, and a
// reload they must follow.

import type { PlaneFigures } from '#src/plane/index.ts';
import type { PoolFigures } from '#src/proxy/index.ts';
import { sumPoolFigures } from '#src/workers/index.ts';

export interface PlaneHosts {
  readonly figures: () => readonly PlaneFigures[];
  readonly reloaded: () => void;
}

/** Before the plane is hosted (and in a gateway that never starts listening). */
export const NO_HOSTS: PlaneHosts = Object.freeze({ figures: () => [], reloaded: () => {} });

export function upstreamOf(hosts: PlaneHosts): Record<string, PoolFigures> {
  return sumPoolFigures(hosts.figures().map((f) => f.upstream));
}

export function upstreamSitesOf(hosts: PlaneHosts): Record<string, PoolFigures> {
  return sumPoolFigures(hosts.figures().map((f) => f.upstreamSites));
}

export function heldBytesOf(hosts: PlaneHosts): number {
  return hosts.figures().reduce((sum, f) => sum + f.heldBytes, 0);
}
