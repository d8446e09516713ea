// Every collaborator of one gateway instance, built in one place, and the current config they
// read. Loops report to the registry; events feed metrics, logs, passive health and the scheduler.

import { systemClock, type Clock } from '#src/core/clock.ts';
import { detach } from '#src/core/detach.ts';
import { EventBus } from '#src/core/events.ts';
import { diffConfig, diffNodes, type GatewayConfig } from '#src/config/index.ts';
import { Discoverer, ListingCache } from '#src/discovery/index.ts';
import { CapacityPoller } from '#src/capacity/index.ts';
import {
  fetchLoad,
  HealthChecker,
  LoadScraper,
  nodeReactions,
  nodeRound,
  NodeRegistry,
  pollingAgents,
  probeNode,
  sendWake,
  wakeProbeIntervalMs,
  WakeManager,
  type RegistryEvents,
} from '#src/nodes/index.ts';
import { requestSettings, type ModelCatalog, type PoolFigures, type ProxyEvents, type RequestSettings } from '#src/proxy/index.ts';
import { inThreadPorts, type RequestPorts } from '#src/ports/index.ts';
import { defaultFilters, policyPerRequest, type PolicySet } from '#src/routing/index.ts';
import { onRoomMayOpen, Scheduler } from '#src/scheduler/index.ts';
import { GatewayMetrics } from '#src/metrics/prometheus.ts';
import { subscribeTransitionLogs } from '#src/logs/transition-log.ts';
import { DashboardHub } from '#src/admin/index.ts';
import type { GatewayOptions, ReloadOutcome } from './options.ts';
import { upstreamVerdict } from './upstream-verdict.ts';
import { restartOnlyChanges } from './restart-only.ts';
import { policyContextFor } from './policy-context.ts';
import { ModelNames } from './model-names.ts';
import { meshPartFor, type MeshPart } from './mesh-part.ts';
import { heldBytesOf, NO_HOSTS, upstreamOf, upstreamSitesOf, type PlaneHosts } from './plane-hosts.ts';
import { publishNotice } from './scheduler-notices.ts';

/** Every collaborator of one gateway instance, and the current config they read. */
export class GatewayParts {
  readonly options: GatewayOptions;
  readonly clock: Clock;
  /** The selection policies by name, one set for requests and explain alike. */
  readonly policies: PolicySet;
  readonly registryEvents: EventBus<RegistryEvents>;
  readonly proxyEvents: EventBus<ProxyEvents>;
  readonly registry: NodeRegistry;
  readonly #checker: HealthChecker;
  readonly #discoverer: Discoverer;
  /** The third loop: each node's own load figures, for least-loaded. */
  readonly #loadScraper: LoadScraper;
  readonly metrics: GatewayMetrics;
  readonly scheduler: Scheduler;
  readonly wakes: WakeManager;
  /** The operator dashboard's traffic history, transition log and live feed. */
  readonly dashboard: DashboardHub;
  /** Federation (`[mesh]`): this site's published set and what it knows of the others. */
  readonly mesh: MeshPart;
  /** One agent per control loop, one connection per node each (src/nodes/polling-agents.ts). */
  readonly #agents = pollingAgents();
  /** Each node's last listing answer: an unchanged one is not parsed again. */
  readonly #listings = new ListingCache();
  readonly #capacityPoller = new CapacityPoller(() => ({
    dispatcher: this.#agents.capacity,
    timeoutMs: this.#config.discovery.timeoutMs,
    maxBytes: this.#config.discovery.maxBodyBytes,
    requestsPerPoll: this.#config.discovery.capacityRequestsPerPoll,
  }));
  readonly #lifetime = new AbortController();
  readonly #unsubscribeLogs: () => void;
  #config: GatewayConfig;
  /** What a request arriving now runs under; rebuilt on reload, read once per request. */
  #settings: RequestSettings;
  #reloading: Promise<unknown> = Promise.resolve();
  readonly #modelNames = new ModelNames(() => this.#config, () => this.registry.views(), () => this.mesh.sites());
  #hosts: PlaneHosts = NO_HOSTS;

  constructor(options: GatewayOptions) {
    this.options = options;
    this.clock = options.clock ?? systemClock;
    this.#config = options.config;
    this.policies = policyPerRequest(policyContextFor(() => this.#config, options.random ?? Math.random));
    this.#settings = requestSettings(options.config);
    const onListenerError = (error: unknown): void => options.logger.error({ err: error }, 'event listener failed');
    this.registryEvents = new EventBus<RegistryEvents>(onListenerError);
    this.proxyEvents = new EventBus<ProxyEvents>(onListenerError);
    this.registry = new NodeRegistry({
      clock: this.clock,
      events: this.registryEvents,
      failThreshold: options.config.health.failThreshold,
      onLeaseReturned: (returned) => this.scheduler.leaseReturned(returned),
      connectionLimit: options.config.upstream.maxConnections,
    });
    this.#checker = new HealthChecker({
      clock: this.clock,
      intervalMs: options.config.health.intervalMs,
      probe: (node, signal) =>
        probeNode(node, {
          dispatcher: this.#agents.health,
          timeoutMs: this.#config.health.timeoutMs,
          monotonicMs: () => this.clock.monotonicMs(),
          signal,
        }),
      onProbe: (name, outcome) => this.registry.observeHealth(name, outcome),
    });
    this.#discoverer = new Discoverer({
      clock: this.clock,
      intervalMs: options.config.discovery.intervalMs,
      minRefreshIntervalMs: options.config.discovery.missCooldownMs,
      fetch: (node, signal) =>
        nodeRound({ dispatcher: this.#agents.discovery, listings: this.#listings, clock: this.clock, discovery: () => this.#config.discovery, capacity: this.#capacityPoller, registry: this.registry }, node, signal),
      onResult: (name, result) => this.registry.observeDiscovery(name, result),
      onError: (name, error) => options.logger.error({ err: error, node: name }, 'applying a discovery result failed'),
    });
    this.#loadScraper = new LoadScraper({
      clock: this.clock,
      intervalMs: options.config.load.intervalMs,
      scrape: (node, signal) =>
        fetchLoad(node, this.registry.view(node.name), {
          dispatcher: this.#agents.load,
          timeoutMs: this.#config.load.timeoutMs,
          maxBytes: this.#config.load.maxBodyBytes,
          signal,
        }),
      onScrape: (node, scrape) => this.registry.observeLoad(node.name, node.url, scrape),
    });
    this.metrics = new GatewayMetrics({
      registryEvents: this.registryEvents,
      proxyEvents: this.proxyEvents,
      nodeViews: () => this.registry.views(),
      queueDepths: () => this.scheduler.queueDepths(),
      leases: () => this.registry.leaseEntries(),
      modelLabel: (model) => this.#modelNames.boundedLabel(model),
      upstreamConnections: () => this.upstreamStats(),
      prefixHits: () => this.policies.prefixHits(),
    });
    const noticeSinks = { events: this.proxyEvents, label: (m: string) => this.#modelNames.requestLabel(m), logger: options.logger };
    this.scheduler = new Scheduler({
      clock: this.clock,
      filters: defaultFilters(),
      policy: this.policies,
      effects: {
        snapshot: () => this.registry.snapshot(),
        claim: (node, model, tokens) => this.registry.claim(node, model, tokens),
        refreshListings: (nodes) => this.#discoverer.refresh(nodes),
        wake: (node, reason) => this.#detach(this.wakes.wake(node, reason), 'wake'),
        notify: (notice) => publishNotice(noticeSinks, notice),
      },
    });
    onRoomMayOpen(this.registryEvents, () => this.scheduler.fleetChanged());
    // Passive health: real requests' outcomes can eject a node; an ejected node is re-probed at once.
    this.proxyEvents.on('proxy:attempt', (e) => {
      const { ejectAfterFailures, ejectForMs } = this.#config.upstream;
      this.registry.observeUpstream(e.node, upstreamVerdict(e.result), { ejectAfterFailures, ejectForMs });
    });
    this.wakes = new WakeManager({
      clock: this.clock,
      registry: this.registry,
      send: sendWake,
      probeFaster: (node, durationMs) =>
        this.#checker.probeFaster(node, wakeProbeIntervalMs(this.#config.health.intervalMs), durationMs),
      onResult: (node, result, detail) => this.registryEvents.emit('node:wake', { node, result, ...detail }),
    });
    // An ejected node is probed at once; a recovered one returns to the normal cadence and is re-listed.
    nodeReactions({ events: this.registryEvents, checker: this.#checker, relist: (nodes) => this.#detach(this.#discoverer.refresh(nodes), 'model refresh after recovery') });
    this.#unsubscribeLogs = subscribeTransitionLogs({
      logger: options.logger,
      registryEvents: this.registryEvents,
      proxyEvents: this.proxyEvents,
      expectedModels: (nodeName) => this.#modelNames.expectedFor(nodeName),
    });
    this.mesh = meshPartFor(this);
    this.dashboard = new DashboardHub({
      clock: this.clock,
      registryEvents: this.registryEvents,
      proxyEvents: this.proxyEvents,
      registry: this.registry,
      queueDepths: () => this.scheduler.queueDepths(),
      aliases: () => this.#settings.catalog.aliases,
      mesh: { events: this.mesh.events, sites: () => this.mesh.admin() },
    });
    const start = diffNodes([], options.config.nodes);
    for (const part of [this.registry, this.#checker, this.#discoverer, this.#loadScraper]) part.applyChange(start);
  }

  config(): GatewayConfig {
    return this.#config;
  }

  /** The request plane is hosted (by this thread, or by the workers): their figures, and reloads they follow. */
  attachPlane(hosts: PlaneHosts): void {
    this.#hosts = hosts;
  }

  /** The ports a request plane in this thread reaches the control plane through. */
  ports(): RequestPorts {
    return inThreadPorts({ scheduler: this.scheduler, registry: this.registry, relist: (node) => this.relist(node), sites: this.mesh.link });
  }

  /** A bounded metrics label for a requested model id. */
  requestLabel(model: string): string {
    return this.#modelNames.requestLabel(model);
  }

  /** A node said it does not have a model its listing showed: re-list it. */
  relist(node: string): void {
    this.#detach(this.#discoverer.refresh([node]), 'model refresh');
  }

  /** Upstream connections per node, over every host of the request plane. */
  upstreamStats(): Record<string, PoolFigures> {
    return upstreamOf(this.#hosts);
  }

  /** Connections per remote site ([mesh] only), over every host of the request plane. */
  upstreamSiteStats(): Record<string, PoolFigures> | undefined {
    return this.mesh.link === undefined ? undefined : upstreamSitesOf(this.#hosts);
  }

  /** Answer bytes held in memory, over every host of the request plane. */
  heldBytesTotal(): number {
    return heldBytesOf(this.#hosts);
  }

  /** Declared aliases and groups, rebuilt on reload. */
  catalog(): ModelCatalog {
    return this.#settings.catalog;
  }

  startLoops(): void {
    this.#detach(this.#checker.start(this.#lifetime.signal), 'health loop');
    this.#detach(this.#discoverer.start(this.#lifetime.signal), 'discovery loop');
    this.#detach(this.#loadScraper.start(this.#lifetime.signal), 'load loop');
  }

  /** Background work whose failure is logged, never left as an unhandled rejection. */
  #detach(work: Promise<unknown>, what: string): void {
    detach(work, (error) => this.options.logger.error({ err: error }, `${what} failed`));
  }

  /** Reloads run one at a time, in the order they were asked for (SIGHUP and the admin API may race). */
  reload(): Promise<ReloadOutcome> {
    const next = this.#reloading.then(() => this.#reloadNow()).then((outcome) => {
      if (outcome.ok) this.#hosts.reloaded();
      this.dashboard.noteReload(outcome);
      return outcome;
    });
    this.#reloading = next.catch(() => undefined);
    return next;
  }

  async #reloadNow(): Promise<ReloadOutcome> {
    const { logger, loadConfig } = this.options;
    if (loadConfig === undefined) return { ok: false, problems: [{ path: '', message: 'reload is not supported here' }] };
    const loaded = await loadConfig();
    if (!loaded.ok) {
      logger.error({ problems: loaded.problems.map((p) => `${p.path}: ${p.message}`) }, 'config reload rejected; keeping the running config');
      return { ok: false, problems: loaded.problems };
    }
    const next = loaded.config;
    const previous = this.#config;
    // One diff, one verdict per node: every component acts on the same change.
    const change = diffConfig(previous, next);
    const restartOnly = restartOnlyChanges(previous, next);
    if (restartOnly.length > 0) logger.warn({ keys: restartOnly }, 'these settings take effect only after a restart');
    this.#config = next;
    this.#settings = requestSettings(next);
    this.registry.setFailThreshold(next.health.failThreshold);
    this.registry.setConnectionLimit(next.upstream.maxConnections);
    this.registry.applyChange(change);
    this.#checker.setIntervalMs(next.health.intervalMs);
    this.#checker.applyChange(change);
    this.#discoverer.setTiming({ intervalMs: next.discovery.intervalMs, minRefreshIntervalMs: next.discovery.missCooldownMs });
    this.#discoverer.applyChange(change);
    this.#loadScraper.setIntervalMs(next.load.intervalMs);
    this.#loadScraper.applyChange(change);
    this.#capacityPoller.setNodes(next.nodes);
    this.#listings.setNodes(next.nodes);
    this.mesh.reconfigure(previous.mesh, next.mesh);
    logger.info({ nodes: next.nodes.map((n) => n.name) }, 'config reloaded');
    return { ok: true };
  }

  async stop(): Promise<void> {
    this.#lifetime.abort();
    await Promise.all([this.#checker.stop(), this.#discoverer.stop(), this.#loadScraper.stop(), this.mesh.stop()]);
    this.#unsubscribeLogs();
    this.dashboard.close();
    this.metrics.close();
    await this.#agents.destroy();
  }
}
