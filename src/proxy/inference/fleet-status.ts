// Pure: the fleet's status as /health tells it to anyone. "ok" while at least one node can take
// traffic (healthy, or not probed yet), "degraded" while only degraded nodes remain, else "down".

import type { NodeView } from '#src/nodes/index.ts';

export type FleetStatus = 'ok' | 'degraded' | 'down';

export function fleetStatus(views: readonly NodeView[]): FleetStatus {
  const usable = views.some((v) => v.health.status === 'healthy' || v.health.status === 'unknown');
  const degraded = views.some((v) => v.health.status === 'degraded');
  return usable ? 'ok' : degraded ? 'degraded' : 'down';
}

/** Load balancers take a node out on a non-2xx answer: 503 only when nothing can serve. */
export function healthHttpStatus(status: FleetStatus): 200 | 503 {
  return status === 'down' ? 503 : 200;
}
