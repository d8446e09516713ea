// Pure: a replica's [cluster] status as the admin documents show it (/admin/runtime, the detailed
// /health): snake_case, times as ISO strings, the fallback's reason when there is one.

import type { ClusterStatus } from './fallback-share.ts';

/**
 * `unconfirmed`: fallback usage (tenant batches, settles) the store has not confirmed yet, 0 once a
 * rejoin is complete; `leading`: whether this replica publishes the site's mesh record (undefined = no leader lease).
 */
export function clusterReport(
  s: ClusterStatus,
  unconfirmed: number,
  leading: boolean | undefined,
): Readonly<Record<string, unknown>> {
  return {
    replica: s.replica,
    store: s.mode === 'shared' ? 'shared' : 'fallback',
    live_replicas: s.liveReplicas,
    leases_held: s.leases,
    waiters: s.waiters,
    store_losses: s.losses,
    tenant_usage_unconfirmed: unconfirmed,
    ...(leading === undefined ? {} : { mesh_leader: leading }),
    ...(s.since === undefined ? {} : { fallback_since: new Date(s.since).toISOString() }),
    ...(s.reason === undefined ? {} : { fallback_reason: s.reason }),
  };
}
