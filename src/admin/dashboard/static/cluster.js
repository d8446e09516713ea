// Cluster line ([cluster] only): the feed's `cluster` (GET /admin/runtime's `cluster`, sent when it
// changes) — this replica's name, whether it shares the store or runs on its share of each node's slots and tenant
// limits (fallback: since when and why), the live replicas, its leases and waiters, and whether it
// publishes the site's mesh record. Hidden without [cluster].

import { html } from './html.js';
import { T } from './text.js';

/** `cluster`: the feed's cluster line, null without [cluster] (or before the feed's first snapshot), `{ error }` when unread. */
export function ClusterView({ cluster }) {
  if (typeof cluster !== 'object' || cluster === null) return html`<section id="cluster" data-state="none" hidden></section>`;
  if (typeof cluster.error === 'string')
    return html`<section id="cluster" data-state="error"><p class="error" id="cluster-error" role="status">${T(cluster.error)}</p></section>`;
  const c = cluster;
  const shared = c.store === 'shared';
  const leader =
    c.mesh_leader === undefined
      ? ''
      : c.mesh_leader === true
        ? " · publishes the site's mesh record"
        : " · another replica publishes the site's mesh record";
  return html`<section id="cluster" data-state="ok" data-store=${shared ? 'shared' : 'fallback'}>
    <p id="cluster-line" class=${shared ? 'muted' : 'error'} role="status">Replica <strong>${T(String(c.replica ?? '?'))}</strong> · ${
      shared
        ? 'shares the store'
        : html`store lost${typeof c.fallback_since === 'string' ? html` since ${T(c.fallback_since)}` : ''}${typeof c.fallback_reason === 'string' ? html` (${T(c.fallback_reason)})` : ''}: each node's slots and each tenant limit are this replica's share`
    } · ${T(String(c.live_replicas ?? '?'))} live replicas · ${T(String(c.leases_held ?? '?'))} leases held · ${T(String(c.waiters ?? '?'))} waiting · ${T(String(c.store_losses ?? 0))} store losses${leader}</p>
  </section>`;
}
