// The owner of one gateway instance, and its composition root: every collaborator, built in one
// place, and the current config they read. Loops report to the registry; events feed metrics,
// logs, passive health and the scheduler. The optional features are one list (features.ts names
// them): their start, stop, reload, metrics and figures are loops over it, and what they add to the
// other parts is one object (FeatureParts), read where each is needed.

import { systemClock, type Clock } from '#src/core/clock.ts';
import { detach } from '#src/core/detach.ts';
import { OneAtATime } from '#src/core/one-at-a-time.ts';
import { EventBus } from '#src/core/events.ts';
import { observeFields, reportsTable, type ReportsTable } from '#src/core/request-fields.ts';
import { diffConfig, diffNodes, type GatewayConfig } from '#src/config/index.ts';
import { NodeLoops, NodeRegistry, sendWake, WakeManager, type RegistryEvents } from '#src/nodes/index.ts';
import {
  requestSettings,
  upstreamVerdict,
  type EndpointTable,
  type ProxyEvents,
  type RequestSettings,
} from '#src/proxy/index.ts';
import { inThreadPorts, ownerReports, type RequestPorts } from '#src/ports/index.ts';
import { defaultFilters, policyPerRequest, type PolicySet } from '#src/routing/index.ts';
import { policyContextFor } from '#src/routing/policy-context.ts';
import { onRoomMayOpen, Scheduler } from '#src/scheduler/index.ts';
import { GatewayMetrics } from '#src/metrics/prometheus.ts';
import { ModelNames } from '#src/metrics/model-names.ts';
import { subscribeTransitionLogs } from '#src/logs/transition-log.ts';
import { NodeFleet, registerFleetMetrics } from '#src/fleet/index.ts';
import { DashboardHub } from '#src/admin/index.ts';
import { PlaneHostFigures, type PlaneHosts, type RequestWorkersOptions } from '#src/workers/index.ts';
import type { RequestTracer } from '#src/core/tracing.ts';
import type { GatewayOptions, ReloadOutcome } from './options.ts';
import { nextConfig } from './next-config.ts';
import { adminTable, mainListenerHealth, type ListenerFigures } from './endpoints.ts';
import { publishNotice } from '#src/logs/scheduler-notices.ts';
import {
  featuresFor,
  inThreadFeaturePorts,
  ownerSides,
  upstreamSites,
  workerStatus,
  type Admission,
  type FeatureModules,
  type FeatureParts,
  type GatewayFeature,
  type UsageStopOutcome,
} from './features.ts';

/** Every collaborator of one gateway instance, and the current config they read. */
export class GatewayParts {
  readonly options: GatewayOptions;
  readonly clock: Clock;
  /** The selection policies by name, one set for requests and explain alike. */
  readonly #policies: PolicySet;
  readonly #registryEvents: EventBus<RegistryEvents>;
  readonly proxyEvents: EventBus<ProxyEvents>;
  readonly registry: NodeRegistry;
  /** Health probes, discovery (with capacity) and load scraping, and their reactions to the registry. */
  readonly #loops: NodeLoops;
  readonly #metrics: GatewayMetrics;
  readonly scheduler: Scheduler;
  /** What request planes admit through: the scheduler, wrapped by every feature that wraps admission. */
  readonly admission: Admission;
  /** The features the config enables (features.ts), in the order they start. */
  readonly #features: readonly GatewayFeature[];
  /** What they add to the other parts, merged. */
  readonly #parts: Partial<FeatureParts>;
  /** The modules of the optional features the config enables (features.ts, `featureModules`). */
  readonly #modules: FeatureModules;
  /** What each says of its own fields of finished requests (its log fields, its per-request series), in the list's order. */
  readonly #reports: ReportsTable;
  readonly #wakes: WakeManager;
  /** The operator dashboard's traffic history, transition log and live feed. */
  readonly dashboard: DashboardHub;
  /** The request plane's hosts' figures, summed (one plane here, or every worker's). */
  readonly #planes: PlaneHostFigures;
  /** The public listener's URL, set as the features start (a feature sends requests through the request plane there). */
  readonly #publicUrl: { url: string | undefined } = { url: undefined };
  readonly #modelNames: ModelNames;
  readonly #lifetime = new AbortController();
  readonly #unsubscribeLogs: () => void;
  /** The config as the file says it; `#config` is it with the node sources' nodes as its `nodes`. */
  #fileConfig: GatewayConfig;
  /** Where the nodes come from: the [[nodes]] list and the [[node_sources]] (src/fleet/). */
  readonly #fleet: NodeFleet;
  #config: GatewayConfig;
  /** What a request arriving now runs under; rebuilt on reload, read once per request. */
  #settings: RequestSettings;
  readonly #reloads = new OneAtATime();

  /** `modules`: `featureModules(options.config, options)` (gateway/features.ts), loaded before the parts are built. */
  constructor(options: GatewayOptions, modules: FeatureModules) {
    this.options = options;
    this.#modules = modules;
    this.clock = options.clock ?? systemClock;
    this.#config = options.config;
    this.#fileConfig = options.config;
    const onListenerError = (error: unknown): void => options.logger.error({ err: error }, 'event listener failed');
    this.#registryEvents = new EventBus<RegistryEvents>(onListenerError);
    this.proxyEvents = new EventBus<ProxyEvents>(onListenerError);
    this.registry = new NodeRegistry({
      clock: this.clock,
      events: this.#registryEvents,
      failThreshold: options.config.health.failThreshold,
      onModelVanished: (node) => this.relist(node),
      connectionLimit: options.config.upstream.maxConnections,
    });
    this.#loops = new NodeLoops({
      clock: this.clock,
      config: () => this.#config,
      registry: this.registry,
      events: this.#registryEvents,
      onError: (error, fields, what) => options.logger.error({ err: error, ...fields }, `${what} failed`),
    });
    this.#planes = new PlaneHostFigures();
    // A source's change takes the reload's path (#adopt): removed nodes drain, added ones are discovered.
    this.#fleet = new NodeFleet(
      {
        clock: this.clock,
        ...(options.dnsLookup === undefined ? {} : { lookup: options.dnsLookup }),
        onNodes: () =>
          this.#detach(
            this.#reloads.run(() => this.#adoptFleet()),
            'node source change',
          ),
        followFailures: (listener) =>
          this.proxyEvents.on('proxy:attempt', (e) => {
            if (upstreamVerdict(e.result) === 'failure') listener(this.registry.view(e.node)?.spec);
          }),
        log: (level, fields, message) => options.logger[level](fields, message),
      },
      options.config,
    );
    // The tenants feature comes first: a state file this build cannot use stops the start before any other is built.
    this.#features = featuresFor(
      options.config,
      options,
      {
        clock: this.clock,
        logger: options.logger,
        config: () => this.#config,
        registry: this.registry,
        registryEvents: this.#registryEvents,
        proxyEvents: this.proxyEvents,
        scheduler: () => this.scheduler,
        refresh: (nodes) => this.#loops.refresh(nodes, { fresh: true }),
        planeFigures: (name) => this.#planes.featureFigures(name),
        reports: () => this.#reports,
        publicUrl: () => this.#publicUrl.url,
      },
      modules,
    );
    this.#reports = reportsTable(this.#features.map((feature) => feature.reports));
    this.#parts = Object.assign({}, ...this.#features.map((feature) => feature.parts ?? {})) as Partial<FeatureParts>;
    const policyContext = policyContextFor(() => this.#config, options.random ?? Math.random);
    this.#policies = policyPerRequest(policyContext);
    this.#parts.shareSessions?.(policyContext.sessions, () => this.#config.routing.sessionTtlMs);
    this.#settings = requestSettings(options.config);
    // The config told on reload, the registry read itself: nothing of this file runs per request.
    this.#modelNames = new ModelNames(options.config, this.registry, this.#parts.remoteSites);
    this.#metrics = new GatewayMetrics({
      registryEvents: this.#registryEvents,
      proxyEvents: this.proxyEvents,
      nodeViews: () => this.registry.views(),
      queueDepths: () => this.scheduler.queueDepths(),
      leases: () => this.registry.leaseEntries(),
      modelLabel: (model) => this.#modelNames.boundedLabel(model),
      upstreamConnections: () => this.#planes.upstream(),
      prefixHits: () => this.#policies.prefixHits(),
      ...(this.#reports.size === 0 ? {} : { featureFields: (request, fields) => observeFields(this.#reports, request, fields) }),
    });
    for (const feature of this.#features) feature.metrics?.(this.#metrics.registry);
    registerFleetMetrics(this.#metrics.registry, this.#fleet);
    const noticeSinks = {
      events: this.proxyEvents,
      label: this.#modelNames.requestLabel,
      logger: options.logger,
    };
    this.scheduler = new Scheduler({
      clock: this.clock,
      filters: defaultFilters(),
      policy: this.#policies,
      effects: {
        // The registry's own methods, bound once: no wrapper of this file's runs per request.
        snapshot: this.registry.snapshot.bind(this.registry),
        claim: this.registry.claim.bind(this.registry),
        refreshListings: (nodes) => this.#loops.refresh(nodes),
        wake: (node, reason) => this.#detach(this.#wakes.wake(node, reason), 'wake'),
        notify: (notice) => publishNotice(noticeSinks, notice),
      },
      models: this.#parts.switchModels,
      switchQueue: () => ({
        mode: this.#config.routing.routerQueue,
        tenants: this.#config.tenants.length,
        replicas: this.#config.cluster !== undefined,
      }),
    });
    // The scheduler's own method, bound once: no function of this file runs when a lease returns.
    this.registry.setLeaseReturned(this.scheduler.leaseReturned.bind(this.scheduler));
    onRoomMayOpen(this.#registryEvents, () => this.scheduler.fleetChanged());
    this.admission = this.#features.reduce<Admission>(
      (inner, feature) => feature.parts?.wrapAdmission?.(inner) ?? inner,
      this.scheduler,
    );
    // Passive health: real requests' outcomes can eject a node; an ejected node is re-probed at once.
    this.registry.followOutcomes(
      (listener) => this.proxyEvents.on('proxy:attempt', listener),
      upstreamVerdict,
      options.config.upstream,
    );
    this.#wakes = new WakeManager({
      clock: this.clock,
      registry: this.registry,
      send: this.#parts.wakeSender?.(sendWake) ?? sendWake,
      probeFaster: (node, durationMs) => this.#loops.probeFaster(node, durationMs),
      onResult: (node, result, detail) => this.#registryEvents.emit('node:wake', { node, result, ...detail }),
    });
    this.#unsubscribeLogs = subscribeTransitionLogs({
      logger: options.logger,
      registryEvents: this.#registryEvents,
      proxyEvents: this.proxyEvents,
      expectedModels: (nodeName) => this.#modelNames.expectedFor(nodeName),
    });
    this.dashboard = new DashboardHub({
      clock: this.clock,
      registryEvents: this.#registryEvents,
      proxyEvents: this.proxyEvents,
      registry: this.registry,
      queueDepths: () => this.scheduler.queueDepths(),
      aliases: () => this.#settings.catalog.aliases,
      mesh: this.#parts.dashboardSites,
    });
    const start = diffNodes([], options.config.nodes);
    this.registry.applyChange(start);
    this.#loops.applyChange(start);
  }

  config(): GatewayConfig {
    return this.#config;
  }

  /** The request plane is hosted (by this thread, or by the workers): their figures, and reloads they follow. */
  attachPlane(hosts: PlaneHosts): void {
    this.#planes.attach(hosts);
  }

  /** The admin table (/admin/*, /metrics, the detailed /health), over this gateway's parts. */
  adminTable(listeners: ListenerFigures): EndpointTable {
    const parts = this.#parts;
    return adminTable(
      {
        clock: this.clock,
        config: () => this.#config,
        registry: this.registry,
        metrics: this.#metrics,
        catalog: () => this.#settings.catalog,
        scheduler: this.scheduler,
        policies: this.#policies,
        liveFeed: this.dashboard.feed,
        requests: parts.recentRequests,
        link: parts.sites,
        reload: () => this.reload(),
        wake: (node) => this.#wakes.wake(node, 'manual'),
        upstream: () => this.#planes.upstream(),
        upstreamSites: () => upstreamSites(this.#parts, (name) => this.#planes.featureFigures(name)),
        heldBytes: () => this.#planes.heldBytes(),
        views: Object.assign({}, ...this.#features.map((feature) => feature.adminViews?.())),
        actions: Object.assign({}, ...this.#features.map((feature) => feature.adminActions?.())),
        explain: (ask) => this.#features.flatMap((feature) => feature.explain?.(ask) ?? []),
        models: parts.modelCommands,
        modelEvents: () => this.#loops.modelEventStreams(),
        degraded: this.#degraded(),
        runtime: () => this.#figures((feature) => feature.runtime?.()),
        nodeSources: () => this.#fleet.reports(),
        health: () => this.#figures((feature) => feature.health?.()),
      },
      listeners,
    );
  }

  /** With [admin] listen: the main listener's /health, counting what degrades it (empty when no feature may). */
  mainListenerHealth(): EndpointTable {
    return mainListenerHealth({ registry: this.registry, clock: this.clock, degraded: this.#degraded() });
  }

  /** Whether a feature degrades /health now; undefined = no feature ever does. */
  #degraded(): (() => boolean) | undefined {
    const degrading = this.#features.flatMap((feature) => (feature.degraded === undefined ? [] : [feature.degraded]));
    return degrading.length === 0 ? undefined : () => degrading.some((degraded) => degraded());
  }

  /** The features' figures of one kind, laid side by side. */
  #figures(of: (feature: GatewayFeature) => Readonly<Record<string, unknown>> | undefined): Readonly<Record<string, unknown>> {
    return Object.assign({}, ...this.#features.map(of));
  }

  /** The ports a request plane in this thread reaches the control plane through. */
  ports(): RequestPorts {
    return inThreadPorts({
      scheduler: this.admission,
      registry: this.registry,
      features: inThreadFeaturePorts(this.#parts),
      learnAnswerNode: (tenant, answerId, node) => this.#policies.learnAnswer(tenant, answerId, node, this.clock.now()),
      sessions: {
        remembered: (req) => this.#policies.sessionNode(req, this.clock.now()),
        keep: (req, target) => this.#policies.keepSession(req, target, this.clock.now()),
      },
      answerOwner: (tenant, answerId) => this.#policies.answerOwner(tenant, answerId, this.clock.now()),
    });
  }

  /** What request workers reach this thread's control plane through (their MessagePorts answer from these). */
  workerOwner(): Pick<
    RequestWorkersOptions,
    'registry' | 'reports' | 'answerOwner' | 'scheduler' | 'features' | 'featureStatus'
  > {
    return {
      registry: this.registry,
      // The workers' answers' nodes are learned into the same table as this thread's, and read from it.
      reports: ownerReports(this.registry, (tenant, answerId, node) =>
        this.#policies.learnAnswer(tenant, answerId, node, this.clock.now()),
      ),
      answerOwner: (tenant, answerId) => this.#policies.answerOwner(tenant, answerId, this.clock.now()),
      scheduler: this.admission,
      features: ownerSides(this.#parts, this.#modules),
      featureStatus: workerStatus,
    };
  }

  /** The tracer of a request plane hosted in this thread (undefined without [tracing]). */
  async tracer(
    plane: string,
    warn: (fields: Record<string, unknown>, message: string) => void,
  ): Promise<RequestTracer | undefined> {
    return this.#parts.tracer?.({ plane, warn });
  }

  /** A bounded metrics label for a requested model id (bound: the request plane calls it directly). */
  get requestLabel(): (model: string) => string {
    return this.#modelNames.requestLabel;
  }

  /** A node said it does not have a model its listing showed: re-list it. */
  relist(node: string): void {
    this.#detach(this.#loops.refresh([node]), 'model refresh');
  }

  startLoops(): void {
    this.#loops.start(this.#lifetime.signal);
    this.#fleet.start();
  }

  /** Starts every feature, in the list's order (the public listener listens at `publicUrl`); the first that cannot run fails the start. */
  async startFeatures(publicUrl: string): Promise<void> {
    this.#publicUrl.url = publicUrl;
    for (const feature of this.#features) await feature.start();
  }

  /** SIGHUP's first step: the request log file is closed and opened again (logrotate moved it), no line lost. */
  reopenLogs(): Promise<void> {
    return this.#parts.reopenLogs?.() ?? Promise.resolve();
  }

  /** Resolves once the request log holds the lines of every request finished so far. */
  logFlushed(): Promise<void> {
    return this.#parts.logFlushed?.() ?? Promise.resolve();
  }

  /** Background work whose failure is logged, never left as an unhandled rejection. */
  #detach(work: Promise<unknown>, what: string): void {
    detach(work, (error) => this.options.logger.error({ err: error }, `${what} failed`));
  }

  /** Reloads run one at a time, in the order they were asked for (SIGHUP and the admin API may race). */
  reload(): Promise<ReloadOutcome> {
    return this.#reloads.run(async () => {
      const outcome = await this.#reloadNow();
      if (outcome.ok) {
        await this.#planes.reloaded();
        for (const feature of this.#features) feature.reloaded?.(this.#config);
      }
      this.dashboard.noteReload(outcome);
      return outcome;
    });
  }

  async #reloadNow(): Promise<ReloadOutcome> {
    const { logger } = this.options;
    const loaded = await nextConfig(this.options, logger, this.#fileConfig);
    if (!loaded.ok) return loaded;
    this.#fileConfig = loaded.config;
    this.#fleet.configure(loaded.config);
    const next = this.#adopt(Object.freeze({ ...loaded.config, nodes: this.#fleet.nodes() }));
    logger.info({ nodes: next.nodes.map((n) => n.name) }, 'config reloaded');
    return { ok: true };
  }

  /** A node source's nodes changed: the file's config with the fleet's nodes, applied as a reload applies it. */
  async #adoptFleet(): Promise<void> {
    this.#adopt(Object.freeze({ ...this.#fileConfig, nodes: this.#fleet.nodes() }));
    await this.#planes.reloaded();
    for (const feature of this.#features) feature.reloaded?.(this.#config);
  }

  /** The one path a new config (a reload's, or a node source's change) takes to every part. */
  #adopt(next: GatewayConfig): GatewayConfig {
    const previous = this.#config;
    // One diff, one verdict per node: every component acts on the same change.
    const change = diffConfig(previous, next);
    this.#config = next;
    this.#modelNames.reconfigure(next);
    this.#settings = requestSettings(next);
    this.registry.setFailThreshold(next.health.failThreshold);
    this.registry.setConnectionLimit(next.upstream.maxConnections);
    this.registry.setEjectionPolicy(next.upstream);
    this.registry.applyChange(change);
    this.#loops.reconfigure(next, change);
    for (const feature of this.#features) feature.reload?.(previous, next);
    return next;
  }

  /** After the drain: every loop and feature stops; answers whether tenant usage was saved. */
  async stop(): Promise<UsageStopOutcome> {
    this.#lifetime.abort();
    this.#fleet.stop();
    await Promise.all([this.#loops.stop(), ...this.#features.map((feature) => feature.stop())]);
    this.#unsubscribeLogs();
    this.dashboard.close();
    this.#metrics.close();
    return this.#parts.usageSaved?.() ?? { saved: true };
  }
}
