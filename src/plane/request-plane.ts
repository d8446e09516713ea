// The request plane, built once by one function for every host: the main thread (`workers = 1`,
// in-thread ports over the Scheduler and registry) and each request worker (ports over its
// MessagePort). It holds the upstream pools, this host's share of the held-answer budget, the
// request dependencies, the public endpoint table, the public listener and its drain, and the
// figures the host reports. What a feature keeps for the plane's life (the remote sites' pools
// with [mesh]) is the feature list's (request-features.ts): this file names no feature. It reaches
// the control plane only through its ports (src/ports/); everything it does not own — leases,
// queues, health, listings, the site store — is on the other side of them.

import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Clock } from '#src/core/clock.ts';
import type { EventBus } from '#src/core/events.ts';
import type { RequestTracer } from '#src/core/tracing.ts';
import { diffConfig, type GatewayConfig } from '#src/config/index.ts';
import type { ListenAddress } from '#src/config/types.ts';
import {
  ActiveRequests,
  HeldBytesBudget,
  mergeTables,
  newRequestIds,
  publicEndpoints,
  requestSettings,
  sameCorsOrigins,
  UpstreamPools,
  type EndpointTable,
  type InferenceDeps,
  type PoolFigures,
  type ProxyEvents,
  type RequestFeature,
  type RequestSettings,
} from '#src/proxy/index.ts';
import type { RequestPorts } from '#src/ports/index.ts';
import { drainServers, listenOn } from './listener.ts';
import type { Parts } from '#src/core/part-key.ts';
import { featureSetOf, forwardRefusal, planeFeaturesFor, requestHooksOf } from './request-features.ts';

/** How the plane tells its host something went wrong (pino in the main thread, a message in a worker). */
export type PlaneLog = (level: 'warn' | 'error', fields: Record<string, unknown>, message: string) => void;

export interface PlaneHost {
  readonly clock: Clock;
  /** The config at start; a reload's reaches the plane through reconfigure(). */
  readonly config: GatewayConfig;
  readonly events: EventBus<ProxyEvents>;
  readonly log: PlaneLog;
  /** A bounded metrics label for a model id (a worker passes the id: its owner bounds it when it re-emits). */
  readonly modelLabel: (model: string) => string;
  /** Hosts sharing the gateway's answer-bytes budget: each holds its share (a shared counter would cost a lock per chunk). */
  readonly hosts: number;
  readonly newRequestId?: () => string;
  /** This host's tracer ([tracing], src/tracing/); absent = off. Flushed when the plane drains. */
  readonly tracer?: RequestTracer | undefined;
}

/** How long a drained plane waits for its last spans to reach the collector. */
export const TRACE_FLUSH_MS = 3000;

/** What one host of the plane reports, for /admin/runtime and /metrics (summed over the hosts). */
export interface PlaneFigures {
  readonly activeRequests: number;
  readonly upstream: Readonly<Record<string, PoolFigures>>;
  readonly heldBytes: number;
  /** Inference requests this host finished (answered, refused or failed). */
  readonly requests: number;
  /**
   * Each feature's figures of this host, by the feature's name (plain data: a worker's cross to its
   * owner; request-features.ts gives them, gateway/features.ts sums them); none for an absent feature.
   */
  readonly features: Readonly<Record<string, unknown>>;
}

export interface RequestPlane {
  /** The request dependencies and the public table in force (rebuilt when a reload changes the feature list). */
  readonly inference: InferenceDeps;
  readonly publicTable: EndpointTable;
  /** What the plane's features hold for the owner's admin views, each under its feature's key (the feature list reads them). */
  readonly parts: Parts;
  /** A reload replaced the config: pools follow the one change, requests arriving now read the new settings. */
  reconfigure(next: GatewayConfig): void;
  figures(): PlaneFigures;
  /** Opens the public listener: the public table and `extra` (the admin table, or the paths a worker relays). */
  listen(address: ListenAddress, extra: EndpointTable, reusePort: boolean): Promise<AddressInfo>;
  /**
   * Stops taking connections, lets requests finish until `deadlineMs` (monotonic), then cuts the
   * rest and closes the pools. `alongside`: other listeners of the host drained in the same wait.
   */
  drain(deadlineMs: number, alongside?: { readonly servers: readonly Server[]; readonly active: () => number }): Promise<void>;
}

export async function buildRequestPlane(ports: RequestPorts, host: PlaneHost): Promise<RequestPlane> {
  const { clock, events, log } = host;
  let config = host.config;
  let settings: RequestSettings = requestSettings(config);
  const pools = new UpstreamPools(config.upstream, {
    clock,
    onConnectionWaitTimeout: (node, figures) =>
      log(
        'warn',
        { node, ...figures, waitedMs: config.upstream.connectionWaitMs },
        'no free upstream connection in time; failing over',
      ),
  });
  // This host's share of the held-answer budget, set again on reload.
  const heldShare = (of: GatewayConfig): number => Math.floor(of.upstream.maxHeldBytesTotal / host.hosts);
  const heldBudget = new HeldBytesBudget(heldShare(config));
  // What the features hold for the plane's life (request-features.ts): the request features are built over it.
  const planeFeatures = await planeFeaturesFor(config, ports, {
    config: () => config,
    clock,
    events,
    tracer: host.tracer,
    heldBudget,
  });
  // The ids this plane gives requests (random UUIDs), one maker for the plane's life.
  const requestIds = host.newRequestId ?? newRequestIds();
  // The request features the config enables (request-features.ts), and the public table built over them.
  const build = (
    features: readonly RequestFeature[],
  ): { readonly inference: InferenceDeps; readonly publicTable: EndpointTable } => {
    const inference: InferenceDeps = {
      clock,
      fleet: ports.fleet,
      reports: ports.reports,
      answerOwner: ports.answerOwner,
      admission: ports.admission,
      pools,
      events,
      settings,
      heldBudget,
      modelLabel: host.modelLabel,
      newRequestId: requestIds,
      hooks: requestHooksOf(features),
    };
    const publicTable = publicEndpoints({
      clock,
      fleet: ports.fleet,
      configuredModels: () => config.models.available,
      corsOrigins: config.server.corsOrigins,
      inference,
      features,
      refusedForwards: forwardRefusal(events),
    });
    return { inference, publicTable };
  };
  let features = planeFeatures.requestFeatures(config);
  let built = build(features);
  let extraTable: EndpointTable | undefined;
  /** The public listener's table in force (the public table and the listener's extra paths), set when it listens. */
  const inForce: { table: EndpointTable } = { table: new Map() };
  const counted = { requests: 0 };
  // Counted in batches (a deferred listener, flushed before the figures are read): nothing of this file runs per request.
  events.deferred('proxy:request-finished', () => void counted.requests++);
  const activeRequests = new ActiveRequests();
  let server: Server | undefined;

  return {
    get inference() {
      return built.inference;
    },
    get publicTable() {
      return built.publicTable;
    },
    parts: planeFeatures.parts,
    reconfigure(next) {
      const change = diffConfig(config, next);
      pools.applyChange(change, next.upstream);
      planeFeatures.reconfigure(change, next);
      const refeatured = featureSetOf(next) === featureSetOf(config) ? undefined : planeFeatures.requestFeatures(next);
      const corsChanged = !sameCorsOrigins(config.server.corsOrigins, next.server.corsOrigins);
      config = next;
      heldBudget.setLimit(heldShare(next));
      settings = requestSettings(next);
      built.inference.settings = settings;
      // A reload that adds or drops the client keys rebuilds the table over the new feature list;
      // one that changes the CORS origins, over the same list.
      if (refeatured !== undefined || corsChanged) {
        features = refeatured ?? features;
        built = build(features);
        if (extraTable !== undefined) inForce.table = mergeTables(built.publicTable, extraTable);
      }
    },
    figures: () => {
      events.flush();
      return {
        activeRequests: activeRequests.count(),
        upstream: pools.stats(),
        heldBytes: heldBudget.held(),
        requests: counted.requests,
        features: planeFeatures.figures(),
      };
    },
    async listen(address, extra, reusePort) {
      extraTable = extra;
      inForce.table = mergeTables(built.publicTable, extra);
      const listening = await listenOn({
        endpoints: inForce,
        host: address.host,
        port: address.port,
        reusePort,
        limits: config.server,
        activeRequests,
        onHandlerError: (error, req) => log('error', { err: error, path: req.url }, 'request handler failed'),
      });
      server = listening.server;
      return listening.address;
    },
    async drain(deadlineMs, alongside) {
      const servers = [...(server === undefined ? [] : [server]), ...(alongside?.servers ?? [])];
      await drainServers({
        servers,
        active: () => activeRequests.count() + (alongside?.active() ?? 0),
        clock,
        deadlineMs,
        onTimeout: (active) => log('warn', { active }, 'drain timeout: closing requests still in flight'),
      });
      await Promise.all([pools.close(), planeFeatures.close()]);
      // Every drained request's spans have ended: they go out now, within a bound (a dead collector holds no stop).
      await host.tracer?.shutdown(TRACE_FLUSH_MS);
    },
  };
}
