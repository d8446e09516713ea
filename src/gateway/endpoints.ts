// Wiring only: the admin table (admin/), filled from the gateway's parts. The public table is the
// request plane's (src/plane/); which listener serves which table is main.ts's choice.

import { adminEndpoints, explainRemote, runtimeView, statusHealthEndpoint, type AdminDeps } from '#src/admin/index.ts';
import type { NodeRegistry } from '#src/nodes/index.ts';
import type { EndpointTable, PoolFigures } from '#src/proxy/index.ts';
import type { Scheduler } from '#src/scheduler/index.ts';
import type { WorkerStatus } from '#src/workers/index.ts';

export interface ListenerFigures {
  /** Requests the HTTP listeners are answering right now (every host of the request plane's, and the admin ones). */
  readonly activeRequests: () => number;
  /** Each request worker's figures when [server] workers > 1; none otherwise. */
  readonly workers?: () => readonly WorkerStatus[];
  /** [mesh]: the sites this thread's request plane backs off from (none when the workers forward: theirs are their own). */
  readonly unreachableSites?: () => ReadonlyMap<string, string>;
}

/** What the admin table reads of the gateway's parts. */
export interface AdminParts extends Pick<
  AdminDeps,
  'clock' | 'config' | 'metrics' | 'catalog' | 'policies' | 'liveFeed' | 'requests' | 'modelEvents' | 'nodeSources' | 'explain'
> {
  readonly registry: AdminDeps['registry'] & Pick<NodeRegistry, 'leaseCount' | 'retiringInFlight'>;
  readonly scheduler: Pick<Scheduler, 'filters' | 'queueDepths' | 'queueReport' | 'switchQueues'>;
  /** [mesh]: the link to the other sites (explain lists them); undefined = alone. */
  readonly link: Parameters<typeof explainRemote>[0];
  readonly reload: AdminDeps['commands']['reload'];
  readonly wake: AdminDeps['commands']['wake'];
  readonly upstream: () => Record<string, PoolFigures>;
  /** [mesh] only. */
  readonly upstreamSites: () => Record<string, PoolFigures> | undefined;
  readonly heldBytes: () => number;
  /** The features' admin read views by path (/admin/tenants; with [cluster]: the whole site's). */
  readonly views: AdminDeps['views'];
  /** The features' admin commands by path (the batch feature's cancel of any tenant's job). */
  readonly actions: AdminDeps['actions'];
  /** /admin/models*. */
  readonly models: AdminDeps['models'];
  /** Whether a feature degrades /health now (a failing state store); undefined = no feature ever does. */
  readonly degraded: AdminDeps['degraded'];
  /** The features' figures in /admin/runtime (e.g. [cluster]'s `cluster`). */
  readonly runtime: () => Readonly<Record<string, unknown>>;
  /** The features' figures in the detailed /health. */
  readonly health: () => Readonly<Record<string, unknown>>;
}

export function adminTable(parts: AdminParts, listeners: ListenerFigures): EndpointTable {
  const { scheduler } = parts;
  return adminEndpoints({
    clock: parts.clock,
    config: parts.config,
    registry: parts.registry,
    metrics: parts.metrics,
    catalog: parts.catalog,
    filters: scheduler.filters,
    policies: parts.policies,
    queueDepths: () => scheduler.queueDepths(),
    queues: () => scheduler.queueReport(),
    switchQueues: () => scheduler.switchQueues(),
    liveFeed: parts.liveFeed,
    ...(parts.requests === undefined ? {} : { requests: parts.requests }),
    remote: explainRemote(parts.link, () => listeners.unreachableSites?.() ?? new Map()),
    ...(parts.views === undefined ? {} : { views: parts.views }),
    ...(parts.actions === undefined ? {} : { actions: parts.actions }),
    ...(parts.explain === undefined ? {} : { explain: parts.explain }),
    ...(parts.models === undefined ? {} : { models: parts.models }),
    ...(parts.modelEvents === undefined ? {} : { modelEvents: parts.modelEvents }),
    ...(parts.degraded === undefined ? {} : { degraded: parts.degraded }),
    ...(parts.nodeSources === undefined ? {} : { nodeSources: parts.nodeSources }),
    healthDetails: parts.health,
    commands: { reload: parts.reload, wake: parts.wake, runtime: () => runtimeView(runtimeSources(parts, listeners)) },
  });
}

/**
 * With [admin] listen and a feature that may degrade /health (a state_dir): the main listener's
 * /health, laid over the request plane's (in this thread, or relayed from the workers), so its
 * status counts what the admin one does. Without one: nothing (the plane's own /health tells the same).
 */
export function mainListenerHealth(parts: Pick<AdminParts, 'registry' | 'clock' | 'degraded'>): EndpointTable {
  if (parts.degraded === undefined) return new Map();
  return statusHealthEndpoint({ registry: parts.registry, clock: parts.clock, degraded: parts.degraded });
}

/** /admin/runtime's sources: the listeners', the registry's, the scheduler's, the planes' and the features'. */
function runtimeSources(parts: AdminParts, listeners: ListenerFigures): Parameters<typeof runtimeView>[0] {
  return {
    activeRequests: listeners.activeRequests,
    leasesInFlight: () => parts.registry.leaseCount(),
    retiringInFlight: () => parts.registry.retiringInFlight(),
    queueDepths: () => parts.scheduler.queueDepths(),
    upstream: parts.upstream,
    upstreamSites: parts.upstreamSites,
    heldBytes: parts.heldBytes,
    workers: listeners.workers,
    features: parts.runtime,
  };
}
