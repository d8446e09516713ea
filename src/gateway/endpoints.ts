// Wiring only: the public table (proxy/) and the admin table (admin/), each given a flat dependency
// object filled from the gateway's parts. Which listener serves which table is main.ts's choice.

import { adminEndpoints, type ExplainRemote } from '#src/admin/index.ts';
import { publicEndpoints, type EndpointTable } from '#src/proxy/index.ts';
import type { WorkerStatus } from '#src/workers/index.ts';
import type { GatewayParts } from './parts.ts';

export interface EndpointTables {
  readonly public: EndpointTable;
  readonly admin: EndpointTable;
}

export interface ListenerFigures {
  /** Requests the HTTP listeners are answering right now. */
  readonly activeRequests: () => number;
  /** Each request worker's figures when [server] workers > 1; none otherwise. */
  readonly workers?: () => readonly WorkerStatus[];
}

export function gatewayEndpoints(parts: GatewayParts, listeners: ListenerFigures): EndpointTables {
  const { clock, registry } = parts;
  return {
    public: publicEndpoints({
      clock,
      registry,
      clientKeys: () => parts.config().server.apiKeys,
      configuredModels: () => parts.config().models.available,
      corsOrigins: () => parts.config().server.corsOrigins,
      inference: parts.inference,
      mesh: parts.mesh.link,
    }),
    admin: adminEndpoints({
      clock,
      config: () => parts.config(),
      registry,
      metrics: parts.metrics,
      catalog: () => parts.catalog(),
      filters: parts.scheduler.filters,
      policies: parts.policies,
      queueDepths: () => parts.scheduler.queueDepths(),
      liveFeed: parts.dashboard.feed,
      sites: () => parts.mesh.admin(),
      remote: explainRemote(parts),
      commands: {
        reload: () => parts.reload(),
        wake: (node) => parts.wakes.wake(node, 'manual'),
        runtime: () => runtimeFigures(parts, listeners),
      },
    }),
  };
}

/** The remote sites as forwarding sees them ([mesh] only): this site left out, back-offs included. */
function explainRemote(parts: GatewayParts): ExplainRemote | undefined {
  const remote = parts.inference.remote;
  if (remote === undefined) return undefined;
  return {
    sites: () => remote.mesh.source.sites().filter((s) => s.id !== remote.mesh.site),
    unreachable: () => remote.reachability.unreachable(),
  };
}

/** /admin/runtime: the process, the requests in flight, and the upstream connections. */
function runtimeFigures(parts: GatewayParts, listeners: ListenerFigures): Record<string, unknown> {
  const memory = process.memoryUsage();
  return {
    rss_bytes: memory.rss,
    heap_used_bytes: memory.heapUsed,
    uptime_seconds: Math.round(process.uptime()),
    active_requests: listeners.activeRequests(),
    leases_in_flight: parts.registry.leaseCount(),
    retiring_in_flight: parts.registry.retiringInFlight(),
    queue_depth: parts.scheduler.queueDepths(),
    upstream: parts.upstreamStats(),
    ...(parts.sitePools === undefined ? {} : { upstream_sites: parts.upstreamSiteStats() }),
    upstream_held_bytes: parts.heldBytesTotal(),
    ...(listeners.workers === undefined ? {} : { workers: listeners.workers() }),
  };
}
