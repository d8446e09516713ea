// The feature list: the only place that names the gateway's optional features. Each lives in its
// own folder, behind its feature file (src/core/feature.ts's `Feature`); `featuresFor` builds the
// ones the config enables, in the order they start (the stop runs them all at once, after the
// drain), and wires what one needs of another (cluster's leader lease gates the mesh's
// publication and, with [batch] shared_dir, which replica runs the batch jobs; cluster counts the tenants' ledger across replicas and shares the model switches).
// The owner (parts.ts) composes the list and never names a feature. A new feature: its folder, its
// feature file, one line below (and its parts, if it adds any, in FeatureParts).

import type { Writable } from 'node:stream';
import type { Logger } from 'pino';
import type { Clock } from '#src/core/clock.ts';
import type { EventBus } from '#src/core/events.ts';
import type { Feature } from '#src/core/feature.ts';
import type { RequestTracer } from '#src/core/tracing.ts';
import type { GatewayConfig } from '#src/config/index.ts';
import type { NodeRegistry, RegistryEvents, WakeDelivery } from '#src/nodes/index.ts';
import type { WakeSpec } from '#src/config/types.ts';
import { translationFor, type PoolFigures, type ProxyEvents } from '#src/proxy/index.ts';
import { sumPoolFigures } from '#src/workers/index.ts';
import { sitesFiguresOf, spansOf } from '#src/plane/index.ts';
import type { Scheduler, SwitchModels } from '#src/scheduler/index.ts';
import type { StateWriteFaults } from '#src/state/index.ts';
import type { AdminDeps, DashboardMesh } from '#src/admin/index.ts';
import type { RemoteSiteView, SessionTable } from '#src/routing/index.ts';
import { ModelsFeature } from '#src/nodes/models/models-feature.ts';
import { TenantsFeature } from '#src/tenants/tenants-feature.ts';
import {
  ledgerTenantAdmission,
  TENANT_ADMISSION,
  tenantsOwnerSide,
  type TenantAdmissionPort,
  type TenantLedger,
} from '#src/tenants/index.ts';
import type { UsageStopOutcome } from '#src/tenants/usage-part.ts';
import { RequestLogFeature } from '#src/logs/request-log-feature.ts';
import type { TracerHost } from '#src/tracing/index.ts';
import { ForwardsFeature } from '#src/mesh/forwards-feature.ts';
import type { MeshOptions } from '#src/mesh/mesh-options.ts';
import { SITES_PORT, type MeshLink } from '#src/mesh/forwarding/mesh-link.ts';
import type { WorkersMeshSource } from '#src/mesh/crossing/index.ts';
import type { OwnerSide } from '#src/core/cross-thread.ts';
import type { ReportsTable } from '#src/core/request-fields.ts';
import { TranslationFeature } from '#src/translate/translation-feature.ts';
import { TRANSLATIONS } from '#src/translate/translations.ts';
import { BATCH_PORT, type BatchPort } from '#src/batch/batch-port.ts';
import type { Parts, PartKey } from '#src/core/part-key.ts';

export type { MeshOptions, UsageStopOutcome };

/** The scheduler's admission as the request planes see it: what a feature may wrap ([cluster]'s shared lease). */
export type Admission = Pick<Scheduler, 'admit' | 'hasAlternative' | 'routerRooms'>;

/**
 * What the features add to the owner's other parts, by the owner's names: each feature gives its
 * own (its `parts`), the owner merges them (a later feature's replaces an earlier one's of the same
 * name: [cluster]'s site-wide tenants report over the tenants' own) and reads them where an
 * optional field per feature stood.
 */
export interface FeatureParts {
  // The control plane's collaborators.
  /** The scheduler's model side of switches (model management). */
  readonly switchModels: SwitchModels;
  /** Wraps the scheduler's admission ([cluster]: the shared slot leases). */
  readonly wrapAdmission: (inner: Admission) => Admission;
  /** Wraps the wake sender ([cluster]: one wake per node per window across the replicas). */
  readonly wakeSender: (
    send: (spec: WakeSpec) => Promise<WakeDelivery>,
  ) => (spec: WakeSpec, target: { readonly node: string; readonly windowMs: number }) => Promise<WakeDelivery>;
  /** Shares the routing's session table beyond this process ([cluster]: through the store). */
  readonly shareSessions: (table: SessionTable, ttlMs: () => number) => void;
  /** Every pinned remote site ([mesh]): model labels count their models as known. */
  readonly remoteSites: () => readonly RemoteSiteView[];
  /** The dashboard's site events and Sites view ([mesh]). */
  readonly dashboardSites: DashboardMesh;
  // The request plane's ports.
  /** The limits ledger every tenant admission is judged by (tenants). */
  readonly ledger: TenantLedger;
  /** Tenant admission counted across replicas ([cluster]). */
  readonly admitTenant: TenantAdmissionPort['admitTenant'];
  /** The link to the other sites ([mesh]). */
  readonly sites: MeshLink | undefined;
  /** What request workers forward and verify with ([mesh]). */
  readonly workersMesh: WorkersMeshSource | undefined;
  /** The Files and Batch API's port ([server] state_dir). */
  readonly batch: BatchPort;
  /** What lets every request worker answer the Files and Batch API ([server] state_dir). */
  readonly workersBatch: OwnerSide;
  /** The tracer of a request plane hosted in this thread ([tracing]). */
  readonly tracer: (host: TracerHost) => Promise<RequestTracer | undefined>;
  // The admin routes' sources.
  readonly modelCommands: NonNullable<AdminDeps['models']>;
  readonly recentRequests: NonNullable<AdminDeps['requests']>;
  // The process's lifecycle.
  readonly reopenLogs: () => Promise<void>;
  readonly logFlushed: () => Promise<void>;
  readonly usageSaved: () => UsageStopOutcome;
}

export type GatewayFeature = Feature<GatewayConfig, Partial<FeatureParts>>;

/** What a caller gives the features beside the config (tests inject transports, keys, faults). */
export interface FeatureOptions {
  /** Federation gossip: the site key codec and the transport (used only with `[mesh]`). */
  readonly meshGossip?: MeshOptions;
  /**
   * Federation's link for the request path (forwarding to other sites, accepting forwarded
   * requests); absent = alone. Built from `[mesh]`, the site key and the mesh's site store.
   */
  readonly mesh?: MeshLink | undefined;
  /** Where `[log] requests = "stdout"` writes; absent = process.stdout. */
  readonly requestLogStdout?: Writable | undefined;
  /** Tests: make the state file's writes fail as a full disk would (src/state/state-db.ts); absent = none. */
  readonly stateFaults?: StateWriteFaults | undefined;
}

/** What the owner offers its features; read when needed (the scheduler is built after the list). */
export interface FeatureHost {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly config: () => GatewayConfig;
  readonly registry: Pick<NodeRegistry, 'views' | 'inFlight' | 'freshViews' | 'snapshot'>;
  readonly registryEvents: EventBus<RegistryEvents>;
  readonly proxyEvents: EventBus<ProxyEvents>;
  readonly scheduler: () => Scheduler;
  /** Listings of these nodes asked now (no cool-down); settles once they are applied. */
  readonly refresh: (nodes: readonly string[]) => Promise<unknown>;
  /** One feature's figures of every request plane host (each feature's by its name: request-features.ts). */
  readonly planeFigures: (name: string) => readonly unknown[];
  /** What each feature says of its own fields of finished requests, in the list's order (read once the list is built). */
  readonly reports: () => ReportsTable;
  /** The public listener's URL once it listens (undefined before): where a feature sends requests through the request plane. */
  readonly publicUrl?: (() => string | undefined) | undefined;
}

/**
 * The optional features' own modules, each loaded only when the config enables its feature: a
 * gateway without [mesh], [cluster], [tracing] or [server] state_dir loads none of their code
 * (issue 42: what is absent costs nothing, at start-up too). The features every gateway builds (the
 * tenants' ledger, model management, the request log, translation, forwards) are imported above.
 */
export interface FeatureModules {
  readonly mesh?: MeshModules | undefined;
  readonly cluster?: typeof import('#src/cluster/cluster-feature.ts') | undefined;
  readonly tracing?: typeof import('#src/tracing/tracing-feature.ts') | undefined;
  readonly batch?: typeof import('#src/batch/batch-feature.ts') | undefined;
}

/** [mesh]: its feature, and the owner's side of its crossing to request workers. */
interface MeshModules {
  readonly feature: typeof import('#src/mesh/mesh-feature.ts');
  readonly crossing: typeof import('#src/mesh/crossing/index.ts');
}

/** Which optional features `config` (and the caller's options) enable: the modules loaded, and the features built. */
function enabledModules(config: GatewayConfig, options: FeatureOptions): Record<keyof FeatureModules, boolean> {
  return {
    mesh: config.mesh !== undefined || options.mesh !== undefined,
    cluster: config.cluster !== undefined,
    tracing: config.tracing !== undefined,
    batch: config.server.stateDir !== undefined,
  };
}

/** Loads the modules of the features `config` enables, for `featuresFor` (before the list is built). */
export async function featureModules(config: GatewayConfig, options: FeatureOptions): Promise<FeatureModules> {
  const on = enabledModules(config, options);
  const [mesh, cluster, tracing, batch] = await Promise.all([
    on.mesh ? Promise.all([import('#src/mesh/mesh-feature.ts'), import('#src/mesh/crossing/index.ts')]) : undefined,
    on.cluster ? import('#src/cluster/cluster-feature.ts') : undefined,
    on.tracing ? import('#src/tracing/tracing-feature.ts') : undefined,
    on.batch ? import('#src/batch/batch-feature.ts') : undefined,
  ]);
  return { mesh: mesh === undefined ? undefined : { feature: mesh[0], crossing: mesh[1] }, cluster, tracing, batch };
}

/** The features `config` enables, in the order they start, built from `featureModules(config, options)`. */
export function featuresFor(
  config: GatewayConfig,
  options: FeatureOptions,
  host: FeatureHost,
  modules: FeatureModules,
): readonly GatewayFeature[] {
  const on = enabledModules(config, options);
  const missing = (Object.keys(on) as (keyof FeatureModules)[]).filter((name) => on[name] && modules[name] === undefined);
  if (missing.length > 0)
    throw new Error(`the modules of ${missing.join(', ')} were not loaded (gateway/features.ts, featureModules)`);
  const { MeshFeature } = modules.mesh?.feature ?? { MeshFeature: undefined };
  const { ClusterFeature } = modules.cluster ?? { ClusterFeature: undefined };
  const { TracingFeature } = modules.tracing ?? { TracingFeature: undefined };
  const { BatchFeature } = modules.batch ?? { BatchFeature: undefined };
  const { clock, logger } = host;
  const tenants = new TenantsFeature(config, {
    clock,
    logger,
    tenants: () => host.config().tenants,
    queues: () => host.scheduler().queueReport(),
    events: {
      finished: (listener) => host.proxyEvents.deferred('proxy:request-finished', listener),
      limited: (listener) => host.proxyEvents.on('proxy:tenant-limited', listener),
    },
    faults: options.stateFaults,
  });
  const models = new ModelsFeature({
    clock,
    logger,
    config: host.config,
    registry: host.registry,
    queueDepths: () => host.scheduler().queueDepths(),
    events: host.registryEvents,
    refresh: host.refresh,
    switchEnded: () => host.scheduler().fleetChanged(),
    routerLoads: () => host.scheduler().routerLoads(),
  });
  const requestLog = new RequestLogFeature(config.log, {
    clock,
    logger,
    events: host.proxyEvents,
    stdout: options.requestLogStdout ?? process.stdout,
    reports: host.reports,
  });
  const cluster =
    config.cluster === undefined || ClusterFeature === undefined
      ? undefined
      : new ClusterFeature(config.cluster, {
          clock,
          logger,
          scheduler: host.scheduler,
          ledger: tenants.ledger,
          tenantsReport: () => tenants.report(),
          holds: (store, replica) => models.reconciler.shareHolds(store, replica),
          switches: {
            book: models.book,
            changed: (node) =>
              void host
                .refresh([node])
                .catch(() => undefined)
                .finally(() => host.scheduler().fleetChanged()),
          },
        });
  const mesh =
    MeshFeature === undefined
      ? undefined
      : new MeshFeature({
          options: options.meshGossip,
          logger,
          clock,
          config: () => host.config().mesh,
          registryEvents: host.registryEvents,
          nodeViews: () => host.registry.views(),
          inFlight: (node) => host.registry.inFlight(node),
          queueDepths: () => host.scheduler().queueDepths(),
          link: options.mesh,
          publishGate: config.mesh === undefined ? undefined : cluster?.publishGate(),
        });
  const tracing =
    config.tracing === undefined || TracingFeature === undefined
      ? undefined
      : new TracingFeature(config.tracing, () => spansOf(host.planeFigures));
  const translation = new TranslationFeature({
    on: () => host.config().routing.translate,
    choose: (endpoint, model) => translationFor(TRANSLATIONS, endpoint, model, host.registry.snapshot().nodes),
  });
  const forwards = new ForwardsFeature({
    logger,
    events: {
      forwarded: (listener) => host.proxyEvents.on('mesh:forwarded', listener),
      forwardedIn: (listener) => host.proxyEvents.on('mesh:forwarded-in', listener),
      reachability: (listener) => host.proxyEvents.on('mesh:site-reachability', listener),
    },
  });
  // [server] state_dir: the Files and Batch API (without one, the request plane's batch routes say what to set).
  const batch =
    BatchFeature === undefined
      ? undefined
      : new BatchFeature(config, {
          clock,
          log: (level, fields, message) => logger[level](fields, message),
          config: host.config,
          views: () => host.registry.views(),
          inFlight: (node) => host.registry.inFlight(node),
          queueDepths: () => host.scheduler().queueDepths(),
          nodeLoad: (node) => host.registry.snapshot().load?.(node),
          origin: () => host.publicUrl?.(),
          faults: options.stateFaults,
          // [cluster] with [batch] shared_dir: one replica runs the shared jobs (the cluster's leader lease "batch").
          lease: cluster === undefined ? undefined : () => cluster.batchRunnerLease(),
        });
  return [tenants, models, requestLog, translation, forwards, tracing, mesh, cluster, batch].filter(
    (feature) => feature !== undefined,
  );
}

/**
 * The features' ports of a request plane hosted in this thread, each under its feature's key: the
 * tenants' admission (the ledger, or [cluster]'s count across replicas) and the mesh's sites link.
 */
export function inThreadFeaturePorts(parts: Partial<FeatureParts>): Parts {
  const ports = new Map<PartKey<unknown>, unknown>([
    [TENANT_ADMISSION, ledgerTenantAdmission(needed(parts, 'ledger'), parts.admitTenant)],
  ]);
  if (parts.sites !== undefined) ports.set(SITES_PORT, parts.sites);
  if (parts.batch !== undefined) ports.set(BATCH_PORT, parts.batch);
  return ports;
}

/**
 * The owner's sides of the features' crossings to request workers (core/cross-thread.ts): the
 * tenants' ledger desk (every worker's tenants judged by the one ledger, or [cluster]'s count),
 * with [mesh], the mirror of the sites, the site key and the one replay memory, and with a
 * state_dir, the batch file every worker answers the Files and Batch API over.
 */
export function ownerSides(parts: Partial<FeatureParts>, modules: FeatureModules): readonly OwnerSide[] {
  const tenants = tenantsOwnerSide(needed(parts, 'ledger'), parts.admitTenant);
  const meshSide = modules.mesh?.crossing.meshOwnerSide;
  const mesh = parts.workersMesh === undefined || meshSide === undefined ? [] : [meshSide(parts.workersMesh)];
  return [tenants, ...mesh, ...(parts.workersBatch === undefined ? [] : [parts.workersBatch])];
}

/** A part every gateway has (the tenants' ledger): its absence is a broken feature list, said at start. */
export function needed<K extends keyof FeatureParts>(parts: Partial<FeatureParts>, name: K): FeatureParts[K] {
  const part = parts[name];
  if (part === undefined) throw new Error(`no feature of the list (gateway/features.ts) gives "${name}"`);
  return part as FeatureParts[K];
}

/** One feature's figures of every request plane host (PlaneHostFigures.featureFigures). */
type HostFigures = (name: string) => readonly unknown[];

/** /admin/runtime's connections per remote site, over every host; undefined without [mesh]. */
export function upstreamSites(parts: Partial<FeatureParts>, hosts: HostFigures): Record<string, PoolFigures> | undefined {
  return parts.sites === undefined ? undefined : sumPoolFigures(sitesFiguresOf(hosts).map((f) => f.upstreamSites));
}

/** What [mesh] adds to a request worker's row in /admin/runtime: the requests it forwarded, and the forwards that reached it. */
export function workerStatus(features: Readonly<Record<string, unknown>>): Readonly<Record<string, unknown>> {
  const [sites] = sitesFiguresOf((name) => (name in features ? [features[name]] : []));
  return { forwarded: sites?.forwarded ?? 0, forwarded_in: sites?.forwardedIn ?? 0 };
}
