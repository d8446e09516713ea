// Wiring only: the admin table (admin/), given a flat dependency object filled from the gateway's
// parts. The public table is the request plane's (src/plane/); which listener serves which table
// is main.ts's choice.

import { adminEndpoints, type ExplainRemote } from '#src/admin/index.ts';
import type { EndpointTable } from '#src/proxy/index.ts';
import type { WorkerStatus } from '#src/workers/index.ts';
import type { GatewayParts } from './parts.ts';

export interface ListenerFigures {
  /** Requests the HTTP listeners are answering right now (every host of the request plane's, and the admin ones). */
  readonly activeRequests: () => number;
  /** Each request worker's figures when [server] workers > 1; none otherwise. */
  readonly workers?: () => readonly WorkerStatus[];
  /** [mesh]: the sites this thread's request plane backs off from (none when the workers forward: theirs are their own). */
  readonly unreachableSites?: () => ReadonlyMap<string, string>;
}

export function adminTable(parts: GatewayParts, listeners: ListenerFigures): EndpointTable {
  const { clock, registry } = parts;
  return adminEndpoints({
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
    remote: explainRemote(parts, listeners),
    commands: {
      reload: () => parts.reload(),
      wake: (node) => parts.wakes.wake(node, 'manual'),
      runtime: () => runtimeFigures(parts, listeners),
    },
  });
}

/** The remote sites as forwarding sees them ([mesh] only): this site left out, back-offs included. */
function explainRemote(parts: GatewayParts, listeners: ListenerFigures): ExplainRemote | undefined {
  const link = parts.mesh.link;
  if (link === undefined) return undefined;
  return {
    sites: () => link.source.sites().filter((s) => s.id !== link.site),
    unreachable: () => listeners.unreachableSites?.() ?? new Map(),
  };
}

/** /admin/runtime: the process, the requests in flight, and the upstream connections. */
function runtimeFigures(parts: GatewayParts, listeners: ListenerFigures): Record<string, unknown> {
  const memory = process.memoryUsage();
  const sites = parts.upstreamSiteStats();
  return {
    rss_bytes: memory.rss,
    heap_used_bytes: memory.heapUsed,
    uptime_seconds: Math.round(process.uptime()),
    active_requests: listeners.activeRequests(),
    leases_in_flight: parts.registry.leaseCount(),
    retiring_in_flight: parts.registry.retiringInFlight(),
    queue_depth: parts.scheduler.queueDepths(),
    upstream: parts.upstreamStats(),
    ...(sites === undefined ? {} : { upstream_sites: sites }),
    upstream_held_bytes: parts.heldBytesTotal(),
    ...(listeners.workers === undefined ? {} : { workers: listeners.workers() }),
  };
}
