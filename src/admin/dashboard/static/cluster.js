// Cluster line ([cluster] only): GET runtime (/admin/runtime) polled every few seconds — this
// replica's name, whether it shares the store or runs on its share of each node's slots and tenant
// limits (fallback: since when and why), the live replicas, its leases and waiters, and whether it
// publishes the site's mesh record. Hidden without [cluster]. A failing answer shows in its place.

import { html } from './html.js';
import { fetchAdmin, usePolled } from './poll.js';
import { T } from './text.js';

const POLL_MS = 2_000;

function useCluster(token) {
  return usePolled(token, { state: 'loading' }, POLL_MS, async (signal) => {
    try {
      const res = await fetchAdmin('runtime', token, signal);
      const body = res.ok ? await res.json() : null;
      if (signal.aborted) return undefined;
      if (!res.ok) return { state: 'error', message: `GET /admin/runtime answered ${res.status}` };
      return typeof body?.cluster === 'object' && body.cluster !== null
        ? { state: 'ok', cluster: body.cluster }
        : { state: 'none' };
    } catch (error) {
      return signal.aborted ? undefined : { state: 'error', message: `GET /admin/runtime failed: ${error?.message ?? error}` };
    }
  });
}

export function ClusterView({ token }) {
  const answer = useCluster(token);
  if (answer.state === 'loading' || answer.state === 'none')
    return html`<section id="cluster" data-state=${answer.state} hidden></section>`;
  if (answer.state === 'error')
    return html`<section id="cluster" data-state="error"><p class="error" id="cluster-error" role="status">${T(answer.message)}</p></section>`;
  const c = answer.cluster;
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
