// Federation's request counters: requests this site forwarded to others, and forwarded requests
// it received. Site labels are pinned site ids (or `_unknown`), results closed sets, so both stay bounded.

import { Counter, type Registry } from 'prom-client';
import type { EventBus } from '#src/core/events.ts';
import type { ProxyEvents } from '#src/proxy/index.ts';

export function registerMeshForwarding(r: Registry, proxyEvents: EventBus<ProxyEvents>): (() => void)[] {
  const out = new Counter({
    name: 'gateway_mesh_forwarded_total',
    help: 'Requests forwarded to another site, by site and attempt result (success, connect_error, timeout, http_5xx, http_error, …).',
    labelNames: ['site', 'result'],
    registers: [r],
  });
  const received = new Counter({
    name: 'gateway_mesh_forwarded_in_total',
    help: 'Forwarded requests received from other sites, by sending site and result (accepted, or the refusal code: unsigned, unknown_site, own_site, bad_signature, expired, replayed, replay_memory_full, digest_mismatch).',
    labelNames: ['site', 'result'],
    registers: [r],
  });
  return [
    proxyEvents.on('mesh:forwarded', (e) => out.inc({ site: e.site, result: e.result })),
    proxyEvents.on('mesh:forwarded-in', (e) => received.inc({ site: e.site, result: e.result })),
  ];
}
