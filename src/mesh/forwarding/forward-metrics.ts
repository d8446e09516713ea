// Federation's request counters: requests this site forwarded to others, and forwarded requests
// it received (the accepted ones also by the tenant they are admitted as). Site labels are pinned
// site ids (or `_unknown`), tenants configured ones (or `default`), results and classes closed
// sets, so all stay bounded. The tenant a sender states is no label: it is the sender's free text.

import { Counter, type Registry } from 'prom-client';
import type { ForwardEvents } from './forward-events.ts';

export function registerForwardMetrics(r: Registry, events: ForwardEvents): (() => void)[] {
  const out = new Counter({
    name: 'gateway_mesh_forwarded_total',
    help: 'Requests forwarded to another site, by site and attempt result (success, connect_error, timeout, http_5xx, http_error, …).',
    labelNames: ['site', 'result'],
    registers: [r],
  });
  const received = new Counter({
    name: 'gateway_mesh_forwarded_in_total',
    help: 'Forwarded requests received from other sites, by sending site and result (accepted, or the refusal code: unsigned, unknown_site, own_site, bad_signature, expired, replayed, replay_memory_full, replay_unavailable, digest_mismatch, malformed_tenant).',
    labelNames: ['site', 'result'],
    registers: [r],
  });
  const admitted = new Counter({
    name: 'gateway_mesh_forwarded_in_tenant_total',
    help: "Forwarded requests accepted from other sites, by sending site, the tenant they are admitted as (the site's [[mesh.sites]] tenant, or default), the class they queue in (the lower of that tenant's and the stated one) and the class the sender stated (none = no tenant stated).",
    labelNames: ['site', 'tenant', 'class', 'claimed_class'],
    registers: [r],
  });
  return [
    events.forwarded((e) => out.inc({ site: e.site, result: e.result })),
    events.forwardedIn((e) => {
      received.inc({ site: e.site, result: e.result });
      if (e.admitted !== undefined)
        admitted.inc({
          site: e.site,
          tenant: e.admitted.tenant,
          class: e.admitted.priority,
          claimed_class: e.admitted.claimedClass ?? 'none',
        });
    }),
  ];
}
