// The one place that names the request plane's optional features: which of them a plane gets is
// decided here, from the config, for the main thread and every request worker alike. A feature the
// config does not enable is not built, and contributes nothing to any request
// (proxy/feature/request-feature.ts). Later features wrap earlier ones' routes.

import type { Clock } from '#src/core/clock.ts';
import type { EventBus } from '#src/core/events.ts';
import { partIn, partKey, partsOf, type Parts } from '#src/core/part-key.ts';
import { sumSpanFigures, type RequestTracer, type SpanFigures } from '#src/core/tracing.ts';
import type { ConfigChange, GatewayConfig } from '#src/config/index.ts';
import { DEFAULT_TENANT } from '#src/core/tenant-class.ts';
import type { RequestPorts } from '#src/ports/index.ts';
import {
  NO_HOOKS,
  OPEN_CALLER,
  type Caller,
  UpstreamPools,
  type ForwardRefusal,
  type HeldBytesBudget,
  type PoolFigures,
  type ProxyEvents,
  type RequestFeature,
  type RequestHooks,
  type StartedRequest,
} from '#src/proxy/index.ts';
import { refusedForwards } from '#src/proxy/sites/refused-forwards.ts';
import type { RemoteDeps } from '#src/proxy/sites/site-target.ts';
import type { sitesFeature } from '#src/proxy/sites/sites-feature.ts';
import { TenantCallers } from '#src/proxy/tenants/tenant-callers.ts';
import { tenantsFeature } from '#src/proxy/tenants/tenants-feature.ts';
import { translateFeature } from '#src/proxy/translate/translate-feature.ts';
import { streamsFeature } from '#src/proxy/streams/streams-feature.ts';
import type { WorkerSide } from '#src/core/cross-thread.ts';
import { SITES_PORT } from '#src/mesh/forwarding/mesh-link.ts';
import { MESH_CROSSING } from '#src/mesh/crossing/mesh-messages.ts';
import { TENANT_ADMISSION, TENANTS_CROSSING, tenantsWorkerSide, type TenantAdmissionPort } from '#src/tenants/index.ts';
import { loadTracer, type TracerHost } from '#src/tracing/index.ts';
import { TRANSLATIONS } from '#src/translate/translations.ts';
import { tracingFeature } from '#src/tracing/request-span.ts';
import { BATCH_PORT } from '#src/batch/batch-port.ts';
import { BATCH_CROSSING } from '#src/batch/batch-crossing.ts';
import { batchRequests } from '#src/batch/batch-routes.ts';
import { unservedBatch } from '#src/batch/batch-unserved.ts';

export interface FeatureHost {
  /** The config in force (a reload's, once applied). */
  readonly config: () => GatewayConfig;
  readonly clock: Clock;
  readonly events: EventBus<ProxyEvents>;
  /** [tracing]: this host's tracer. */
  readonly tracer: RequestTracer | undefined;
  /** [mesh]: this host's forwarding to the remote sites (its pools, its unreachable-site back-off). */
  readonly remote: RemoteDeps | undefined;
  /** [mesh]: the request half of the sites, loaded with the sites port (`planeFeaturesFor`); given with `remote`. */
  readonly sites?: typeof sitesFeature | undefined;
}

/** The request features `config` enables: client keys and tenants, federation, tracing, translation, resumable streams. */
export function requestFeaturesFor(config: GatewayConfig, ports: RequestPorts, host: FeatureHost): readonly RequestFeature[] {
  const features: RequestFeature[] = [];
  const { remote, sites: sitesFeature } = host;
  // Built only for a feature that serves tenants' callers; the tenants' admission port is asked only by their limits gates.
  const callers =
    config.tenants.length > 0 || remote !== undefined
      ? new TenantCallers({ admission: tenantAdmission(ports.features), events: host.events })
      : undefined;
  // [[tenants]], or [server] api_keys as the `default` tenant: every keyed route asks for a key.
  if (callers !== undefined && config.tenants.length > 0) features.push(tenantsFeature(() => host.config().tenants, callers));
  if (callers !== undefined && remote !== undefined && sitesFeature !== undefined)
    features.push(
      sitesFeature({
        remote,
        clock: host.clock,
        events: host.events,
        tenancy: () => ({ pins: host.config().mesh?.sites ?? [], tenants: host.config().tenants }),
        tenants: callers,
        sessions: ports.sessions,
      }),
    );
  if (host.tracer !== undefined) features.push(tracingFeature(host.tracer));
  // [routing] translate (on by default): Anthropic Messages served over Chat Completions where no node speaks it.
  if (config.routing.translate) features.push(translateFeature({ fleet: ports.fleet, clock: host.clock }, TRANSLATIONS));
  // [routing] resumable_streams (on by default): a request carrying X-Conversation-Id is followed, and its stream's routes reach its node.
  if (config.routing.resumableStreams) features.push(streamsFeature({ learn: learnsAnswers(ports) }));
  // The Files and Batch API's routes: served through its port ([server] state_dir: the feature's own in this thread,
  // its worker side's in a request worker; its line route serves a job's lines as the job's tenant), else answering what to set.
  const batch = partIn(ports.features, BATCH_PORT) ?? unservedBatch(host.config);
  features.push(batchRequests(batch, (name) => tenantCallerOf(name, host.config(), callers)));
  return features;
}

/** Where the one memory of owners learns, asked of the ports only when a request teaches it; undefined = nothing learns. */
function learnsAnswers(ports: RequestPorts): ((tenant: string, ownedId: string, node: string) => void) | undefined {
  return (tenant, ownedId, node) => ports.reports.learnAnswerNode?.(tenant, ownedId, node);
}

/** A tenant's caller by its name (a batch's owner): the open caller for `default` without client keys; undefined = no such tenant now. */
function tenantCallerOf(name: string, config: GatewayConfig, callers: TenantCallers | undefined): Caller | undefined {
  if (config.tenants.length === 0) return name === DEFAULT_TENANT ? OPEN_CALLER : undefined;
  const spec = config.tenants.find((tenant) => tenant.name === name);
  return spec === undefined || callers === undefined ? undefined : callers.ofSpec(spec);
}

/** The tenants' admission port among the features' ports (every gateway's owner gives one: its ledger). */
function tenantAdmission(ports: Parts): TenantAdmissionPort {
  const port = partIn(ports, TENANT_ADMISSION);
  if (port === undefined) throw new Error('the request plane was given no tenant-admission port (gateway/features.ts)');
  return port;
}

/** What one plane's features hold for the plane's whole life (built once; the request features are rebuilt over it on reload). */
export interface PlaneFeatures {
  /** The request features `config` enables, over what the plane's features hold. */
  requestFeatures(config: GatewayConfig): readonly RequestFeature[];
  /** A reload: the features' pools follow the one change. */
  reconfigure(change: ConfigChange, next: GatewayConfig): void;
  /** Each feature's figures of this host, by the feature's name (plain data); none for an absent feature. */
  figures(): Readonly<Record<string, unknown>>;
  /** What the plane's features hold for the owner's admin views, each under its feature's key (unreachableSites reads it). */
  readonly parts: Parts;
  /** After the drain: the features' pools close. */
  close(): Promise<void>;
}

/** What a plane gives its features beside the config. */
export interface PlaneFeatureHost extends Omit<FeatureHost, 'remote' | 'sites'> {
  /** The plane's share of the held-answer budget (a remote site's answer is held like a node's). */
  readonly heldBudget: HeldBytesBudget;
}

/**
 * The features of one plane: with the mesh's sites port ([mesh]), this host's pools to the remote
 * sites and its unreachable-site back-off (a worker's are its own), and the sites' request half,
 * loaded then (a plane without the port loads none of the forwarding and signing code).
 */
export async function planeFeaturesFor(
  config: GatewayConfig,
  ports: RequestPorts,
  host: PlaneFeatureHost,
): Promise<PlaneFeatures> {
  const link = partIn(ports.features, SITES_PORT);
  const [sites, deps] =
    link === undefined
      ? [undefined, undefined]
      : await Promise.all([import('#src/proxy/sites/sites-feature.ts'), import('#src/proxy/sites/remote-deps.ts')]);
  const sitePools = link === undefined ? undefined : new UpstreamPools(config.upstream, { clock: host.clock });
  const remote =
    link === undefined || sitePools === undefined || deps === undefined
      ? undefined
      : deps.remoteDeps(link, { pools: sitePools, clock: host.clock, events: host.events, heldBudget: host.heldBudget });
  const featureHost: FeatureHost = {
    config: host.config,
    clock: host.clock,
    events: host.events,
    tracer: host.tracer,
    remote,
    sites: sites?.sitesFeature,
  };
  const { tracer } = host;
  // [mesh]: the requests this host forwarded, and the forwards that reached it.
  const forwards = { forwarded: 0, forwardedIn: 0 };
  if (remote !== undefined) {
    host.events.on('mesh:forwarded', () => void forwards.forwarded++);
    host.events.on('mesh:forwarded-in', () => void forwards.forwardedIn++);
  }
  return {
    requestFeatures: (next) => requestFeaturesFor(next, ports, featureHost),
    reconfigure: (change, next) => sitePools?.applyChange(change, next.upstream),
    figures: () => ({
      ...(sitePools === undefined
        ? {}
        : { [MESH_FIGURES]: { upstreamSites: sitePools.stats(), ...forwards } satisfies SitesFigures }),
      ...(tracer === undefined ? {} : { [TRACING_FIGURES]: { spans: tracer.figures() } satisfies TracingFigures }),
    }),
    parts: remote === undefined ? new Map() : partsOf(SITE_BACKOFFS, remote.reachability),
    close: async () => {
      await sitePools?.close();
    },
  };
}

/** The features' names among a plane's figures (PlaneFigures.features). */
const MESH_FIGURES = 'mesh';
const TRACING_FIGURES = 'tracing';

/** [mesh]: a host's figures of its forwarding, under the mesh's name. */
export interface SitesFigures {
  /** Connections to remote sites per site id. */
  readonly upstreamSites: Readonly<Record<string, PoolFigures>>;
  /** Requests this host forwarded to another site / that arrived claiming to be forwarded. */
  readonly forwarded: number;
  readonly forwardedIn: number;
}

/** [tracing]: a host's spans exported, dropped and failed, under the tracing feature's name. */
export interface TracingFigures {
  readonly spans: SpanFigures;
}

/** One feature's figures of every host (PlaneHostFigures.featureFigures): the mesh's forwarding. */
export function sitesFiguresOf(hosts: (name: string) => readonly unknown[]): readonly SitesFigures[] {
  return hosts(MESH_FIGURES) as readonly SitesFigures[];
}

/** Every host's span figures summed; undefined = no host traces. */
export function spansOf(hosts: (name: string) => readonly unknown[]): SpanFigures | undefined {
  return sumSpanFigures((hosts(TRACING_FIGURES) as readonly TracingFigures[]).map((f) => f.spans));
}

/** [mesh]: the sites this plane backs off from, among the plane's parts (this list alone reads them). */
const SITE_BACKOFFS = partKey<RemoteDeps['reachability']>('site back-offs');

/** The sites a plane backs off from now, by id with why (explain); empty without [mesh]. */
export function unreachableSites(parts: Parts): ReadonlyMap<string, string> {
  return partIn(parts, SITE_BACKOFFS)?.unreachable() ?? new Map();
}

/** What a feature's worker side is given by its request worker. */
export interface WorkerSideHost {
  /** The config in force in the worker (a reload's, once pushed). */
  readonly config: () => GatewayConfig;
  readonly clock: Clock;
  /** To the feature's owner side (carried under its name). */
  readonly send: (message: unknown) => void;
}

/** Starts a feature's worker side from what its owner side began it with; undefined = nothing to do in this worker. */
export type WorkerSideStart = (init: unknown, host: WorkerSideHost) => WorkerSide | undefined | Promise<WorkerSide | undefined>;

/**
 * Each feature's worker side, by its crossing's name (core/cross-thread.ts): a request worker
 * starts those its owner began (gateway/features.ts gives the owner sides). The mesh's is loaded
 * only by a worker that starts one (it brings libp2p's key codec), the batch's likewise (node:sqlite).
 */
export const WORKER_SIDES: Readonly<Record<string, WorkerSideStart>> = {
  [TENANTS_CROSSING]: (_init, host) => tenantsWorkerSide(host.send),
  [MESH_CROSSING]: async (init, host) => (await import('#src/mesh/crossing/worker-mesh.ts')).meshWorkerSide(init, host),
  [BATCH_CROSSING]: async (init, host) => (await import('#src/batch/batch-worker-side.ts')).batchWorkerSide(init, host),
};

/**
 * Where no feature takes forwards (no [mesh]): how the public table refuses a request claiming to be
 * one — the mesh's header and refusal (proxy/sites/refused-forwards.ts); nothing of it runs for a
 * request that claims nothing.
 */
export function forwardRefusal(events: EventBus<ProxyEvents>): ForwardRefusal {
  return refusedForwards(events);
}

/**
 * [tracing]: the tracer a request worker's plane loads for itself (its own provider, batch queue and
 * exporter: a span never crosses to the owner); undefined = off. The main thread's comes with the
 * tracing feature (gateway/features.ts).
 */
export function hostTracer(config: GatewayConfig, host: TracerHost): Promise<RequestTracer | undefined> {
  return loadTracer(config.tracing, host);
}

/** Which features a config enables, to tell whether a reload changes the list (a reload may add or drop client keys, or translation). */
export function featureSetOf(config: GatewayConfig): string {
  return `${config.tenants.length > 0 ? 'tenants' : ''}${config.routing.translate ? '+translate' : ''}${config.routing.resumableStreams ? '+streams' : ''}`;
}

/** The features' per-request hooks, composed once: none = NO_HOOKS (the handler calls nothing). */
export function requestHooksOf(features: readonly RequestFeature[]): RequestHooks {
  const started = features.flatMap((f) => (f.started === undefined ? [] : [f.started]));
  const sources = features.flatMap((f) => (f.targets === undefined ? [] : [f.targets]));
  const translating = features.flatMap((f) => (f.translations === undefined ? [] : [f.translations]));
  const marks = features.flatMap((f) => (f.marks === undefined ? [] : [f.marks]));
  if (started.length === 0 && sources.length === 0 && translating.length === 0 && marks.length === 0) return NO_HOOKS;
  // By endpoint; an earlier feature's translation of an endpoint is kept.
  const translations = Object.freeze(Object.assign(Object.create(null) as object, ...[...translating].reverse()));
  const [only] = started;
  return {
    started:
      started.length <= 1
        ? only
        : (request: StartedRequest) => {
            for (const start of started) start(request);
          },
    sources,
    translations,
    ...(marks.length === 0 ? {} : { marks }),
  };
}
