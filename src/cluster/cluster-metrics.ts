// [cluster]'s series on the gateway's registry: the store's mode, its losses, the live replicas,
// the leases and waiters of this replica, and the tenant usage not yet confirmed by the store.

import { Gauge, type Registry } from 'prom-client';
import type { ClusterStatus } from './fallback-share.ts';

export function registerClusterMetrics(
  registry: Registry,
  status: () => ClusterStatus | undefined,
  unconfirmed: () => number,
): void {
  const gauge = (name: string, help: string, read: (s: ClusterStatus) => number): void => {
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        const now = status();
        if (now !== undefined) this.set(read(now));
      },
    });
  };
  gauge(
    'gateway_cluster_store_up',
    "1 while this replica shares slot leases through the store, 0 while it falls back to its share of each node's slots.",
    (s) => (s.mode === 'shared' ? 1 : 0),
  );
  gauge(
    'gateway_cluster_store_losses',
    'Times this replica lost the store since it started (each loss is logged once).',
    (s) => s.losses,
  );
  gauge(
    'gateway_cluster_live_replicas',
    'Replicas alive as the store last counted them (this one included).',
    (s) => s.liveReplicas,
  );
  gauge('gateway_cluster_leases_held', 'Slot leases this replica holds across the cluster now.', (s) => s.leases);
  gauge('gateway_cluster_waiters', 'Requests of this replica waiting in the global queues now.', (s) => s.waiters);
  gauge(
    'gateway_cluster_tenant_usage_unconfirmed',
    'Tenant usage counted alone in fallback (batches per tenant, settles) the store has not confirmed yet; 0 once a rejoin is complete.',
    () => unconfirmed(),
  );
}
