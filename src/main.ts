// Composition root: builds every long-lived object, wires loops to the registry and events to
// metrics and logs, serves HTTP, and applies reloads. Nothing else calls `new` on these things.

import { randomUUID } from 'node:crypto';
import { Agent } from 'undici';
import type { Logger } from 'pino';
import { systemClock, sleep, type Clock } from '#src/core/clock.ts';
import { EventBus } from '#src/core/events.ts';
import type { ConfigProblem, GatewayConfig, LoadResult, NodeSpec } from '#src/config/types.ts';
import { Discoverer, fetchModelList, type DiscoveryResult } from '#src/discovery/index.ts';
import { fetchCapacity } from '#src/capacity/index.ts';
import { HealthChecker, NodeRegistry, probeNode, type RegistryEvents } from '#src/nodes/index.ts';
import {
  AdmissionQueue,
  buildCatalog,
  createHttpServer,
  listen,
  UpstreamPools,
  urlOf,
  type GatewayHttpServer,
  type ModelCatalog,
  type ProxyEvents,
} from '#src/proxy/index.ts';
import { defaultFilters, filterCandidates, leastInFlight, nodesWorthRefreshing, type RouteRequest } from '#src/routing/index.ts';
import { GatewayMetrics } from '#src/metrics/prometheus.ts';
import { subscribeTransitionLogs } from '#src/logs/transition-log.ts';
import { buildEndpoints } from '#src/admin/endpoints.ts';

export interface GatewayOptions {
  readonly config: GatewayConfig;
  readonly logger: Logger;
  readonly clock?: Clock;
  /** Re-reads the config for SIGHUP and POST /admin/reload; absent = reload unsupported. */
  readonly loadConfig?: () => Promise<LoadResult>;
  /** How long close() lets in-flight requests finish. */
  readonly drainTimeoutMs?: number;
}

export type ReloadOutcome = { readonly ok: true } | { readonly ok: false; readonly problems: readonly ConfigProblem[] };

export class Gateway {
  readonly url: string;
  readonly registry: NodeRegistry;
  readonly #server: GatewayHttpServer;
  readonly #parts: GatewayParts;
  #closed = false;

  private constructor(url: string, server: GatewayHttpServer, parts: GatewayParts) {
    this.url = url;
    this.#server = server;
    this.#parts = parts;
    this.registry = parts.registry;
  }

  static async start(options: GatewayOptions): Promise<Gateway> {
    const parts = new GatewayParts(options);
    const server = createHttpServer({
      endpoints: () => parts.endpoints,
      onHandlerError: (error, req) => options.logger.error({ err: error, path: req.url }, 'request handler failed'),
      requestTimeoutMs: 60_000,
      headersTimeoutMs: 20_000,
      keepAliveTimeoutMs: 65_000,
    });
    const { host, port } = options.config.server.listen;
    const address = await listen(server, host, port);
    const gateway = new Gateway(urlOf(address), server, parts);
    parts.startLoops();
    options.logger.info({ url: gateway.url, nodes: options.config.nodes.length }, 'gateway listening');
    return gateway;
  }

  reload(): Promise<ReloadOutcome> {
    return this.#parts.reload();
  }

  /**
   * Resolves true once every node has answered (or failed) its first health probe and model
   * listing, false if that takes longer than `timeoutMs`. For the demo and tests; serving does
   * not wait for it (untried nodes take traffic).
   */
  async firstRoundDone(timeoutMs: number): Promise<boolean> {
    const clock = this.#parts.clock;
    const deadline = clock.monotonicMs() + timeoutMs;
    const settled = (): boolean =>
      this.registry
        .views()
        .every((v) => v.health.status !== 'unknown' && (v.discovery.phase !== 'untried' || v.discovery.fails > 0));
    while (!settled()) {
      if (clock.monotonicMs() >= deadline) return false;
      await sleep(clock, 20);
    }
    return true;
  }

  /** Stops accepting, lets in-flight requests finish (bounded), then stops every loop. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    const drainMs = this.#parts.options.drainTimeoutMs ?? 10_000;
    const log = this.#parts.options.logger;
    log.debug({ active: this.#server.activeRequests() }, 'close: finishing in-flight requests');
    // Stop accepting, wait until every request being answered has finished (bounded), then close
    // every connection: keep-alive sockets would otherwise hold the server open indefinitely.
    const deadline = this.#parts.clock.monotonicMs() + drainMs;
    while (this.#server.activeRequests() > 0 && this.#parts.clock.monotonicMs() < deadline) {
      this.#server.closeIdleConnections();
      await sleep(this.#parts.clock, 25);
    }
    this.#server.closeAllConnections();
    await closed;
    await this.#parts.stop();
    log.debug('close: stopped');
  }
}

/** Every collaborator of one gateway instance, and the current config they read. */
class GatewayParts {
  readonly options: GatewayOptions;
  readonly clock: Clock;
  readonly registryEvents: EventBus<RegistryEvents>;
  readonly proxyEvents: EventBus<ProxyEvents>;
  readonly registry: NodeRegistry;
  readonly pools: UpstreamPools;
  readonly checker: HealthChecker;
  readonly discoverer: Discoverer;
  readonly metrics: GatewayMetrics;
  readonly queue: AdmissionQueue;
  readonly filters = defaultFilters();
  readonly endpoints;
  readonly #healthAgent = new Agent({ connections: 2, keepAliveTimeout: 10_000 });
  readonly #discoveryAgent = new Agent({ connections: 2, keepAliveTimeout: 10_000 });
  readonly #lifetime = new AbortController();
  readonly #unsubscribeLogs: () => void;
  #config: GatewayConfig;
  #catalog: ModelCatalog;
  #knownModels: { views: unknown; ids: Set<string> } = { views: undefined, ids: new Set() };

  constructor(options: GatewayOptions) {
    this.options = options;
    this.clock = options.clock ?? systemClock;
    this.#config = options.config;
    this.#catalog = buildCatalog(options.config.models);
    this.queue = new AdmissionQueue(this.clock);
    const onListenerError = (error: unknown): void => options.logger.error({ err: error }, 'event listener failed');
    this.registryEvents = new EventBus<RegistryEvents>(onListenerError);
    this.proxyEvents = new EventBus<ProxyEvents>(onListenerError);
    this.registry = new NodeRegistry({
      clock: this.clock,
      events: this.registryEvents,
      failThreshold: options.config.health.failThreshold,
      onLeaseReleased: (_node, model) => this.queue.wake(model),
    });
    this.pools = new UpstreamPools(options.config.upstream);
    this.checker = new HealthChecker({
      clock: this.clock,
      intervalMs: options.config.health.intervalMs,
      probe: (node, signal) =>
        probeNode(node, {
          dispatcher: this.#healthAgent,
          timeoutMs: this.#config.health.timeoutMs,
          monotonicMs: () => this.clock.monotonicMs(),
          signal,
        }),
      onProbe: (name, outcome) => this.registry.observeHealth(name, outcome),
    });
    this.discoverer = new Discoverer({
      clock: this.clock,
      intervalMs: options.config.discovery.intervalMs,
      minRefreshIntervalMs: options.config.discovery.missCooldownMs,
      fetch: (node, signal) => this.#pollModels(node, signal),
      onResult: (name, result) => this.registry.observeDiscovery(name, result),
    });
    this.metrics = new GatewayMetrics({
      registryEvents: this.registryEvents,
      proxyEvents: this.proxyEvents,
      nodeViews: () => this.registry.views(),
      queueDepths: () => this.queue.depths(),
      leases: () => this.registry.leases.entries(),
    });
    // Capacity or health changes can open room for requests waiting in a queue.
    this.registryEvents.on('node:capacity', () => this.queue.wakeAll());
    this.registryEvents.on('node:health-changed', () => this.queue.wakeAll());
    this.registryEvents.on('node:discovery', () => this.queue.wakeAll());
    this.#unsubscribeLogs = subscribeTransitionLogs({
      logger: options.logger,
      registryEvents: this.registryEvents,
      proxyEvents: this.proxyEvents,
      expectedModels: (nodeName) => this.#expectedModels(nodeName),
    });
    this.registry.setNodes(options.config.nodes);
    this.checker.setNodes(options.config.nodes);
    this.discoverer.setNodes(options.config.nodes);
    const policy = leastInFlight();
    this.endpoints = buildEndpoints({
      logger: options.logger,
      clock: this.clock,
      config: () => this.#config,
      registry: this.registry,
      metrics: this.metrics,
      reload: () => this.reload(),
      inference: {
        clock: this.clock,
        registry: this.registry,
        pools: this.pools,
        admission: {
          clock: this.clock,
          registry: this.registry,
          filters: this.filters,
          policy,
          queue: this.queue,
          queueTimeoutMs: () => this.#config.routing.queueTimeoutMs,
          maxQueue: () => this.#config.routing.maxQueue,
          onModelMiss: (req) => this.#refreshOnMiss(req),
          onDecision: (req, decision) =>
            this.proxyEvents.emit('route:excluded', { model: this.#modelLabel(req.model), excluded: decision.excluded }),
        },
        events: this.proxyEvents,
        catalog: () => this.#catalog,
        maxRequestBodyBytes: () => this.#config.server.maxRequestBodyBytes,
        retryAfterSeconds: () => Math.max(1, Math.ceil(this.#config.health.intervalMs / 1000)),
        loadOnDemand: () => this.#config.routing.loadOnDemand,
        completionReserveTokens: () => this.#config.routing.completionReserveTokens,
        tokenizeTimeoutMs: () => this.#config.routing.tokenizeTimeoutMs,
        modelLabel: (model) => this.#modelLabel(model),
        onModelVanished: (nodeName) => void this.discoverer.refresh([nodeName]),
        newRequestId: () => randomUUID(),
      },
    });
  }

  #modelLabel(model: string): string {
    return this.#isKnownModel(model) ? model : '_unknown';
  }

  /**
   * One discovery round for a node: its model list, then (on success) its per-model context and
   * slots, asked only for models the list shows as loaded.
   */
  async #pollModels(node: NodeSpec, signal: AbortSignal): Promise<DiscoveryResult> {
    const { timeoutMs, maxBodyBytes } = this.#config.discovery;
    const result = await fetchModelList(node, { dispatcher: this.#discoveryAgent, timeoutMs, maxBodyBytes, signal, clock: this.clock });
    if (result.ok && result.models.length > 0 && !signal.aborted) {
      const capacity = await fetchCapacity(node, result.models, { dispatcher: this.#discoveryAgent, timeoutMs, maxBytes: maxBodyBytes, signal });
      if (!signal.aborted) this.registry.observeCapacity(node.name, node.url, capacity);
    }
    return result;
  }

  startLoops(): void {
    void this.checker.start(this.#lifetime.signal);
    void this.discoverer.start(this.#lifetime.signal);
  }

  async reload(): Promise<ReloadOutcome> {
    const { logger, loadConfig } = this.options;
    if (loadConfig === undefined) return { ok: false, problems: [{ path: '', message: 'reload is not supported here' }] };
    const loaded = await loadConfig();
    if (!loaded.ok) {
      logger.error({ problems: loaded.problems.map((p) => `${p.path}: ${p.message}`) }, 'config reload rejected; keeping the running config');
      return { ok: false, problems: loaded.problems };
    }
    const next = loaded.config;
    const previous = this.#config;
    if (next.server.listen.host !== previous.server.listen.host || next.server.listen.port !== previous.server.listen.port) {
      logger.warn({ listen: next.server.listen }, 'server.listen changed; it takes effect only after a restart');
    }
    this.#config = next;
    this.#catalog = buildCatalog(next.models);
    this.registry.setFailThreshold(next.health.failThreshold);
    this.registry.setNodes(next.nodes);
    this.pools.setNodes(next.nodes, next.upstream);
    this.checker.setIntervalMs(next.health.intervalMs);
    this.checker.setNodes(next.nodes);
    this.discoverer.setNodes(next.nodes);
    logger.info({ nodes: next.nodes.map((n) => n.name) }, 'config reloaded');
    return { ok: true };
  }

  async stop(): Promise<void> {
    this.#lifetime.abort();
    await Promise.all([this.checker.stop(), this.discoverer.stop()]);
    this.#unsubscribeLogs();
    this.metrics.close();
    await this.pools.close();
    await Promise.all([this.#healthAgent.destroy(), this.#discoveryAgent.destroy()]);
  }

  #expectedModels(nodeName: string): string[] {
    const node = this.#config.nodes.find((n) => n.name === nodeName);
    if (node === undefined) return [];
    return this.#config.models.available.filter((m) => m.group === node.group).map((m) => m.name);
  }

  #isKnownModel(model: string): boolean {
    const views = this.registry.views();
    if (this.#knownModels.views !== views) {
      const ids = new Set(this.#config.models.available.map((m) => m.name));
      for (const v of views) for (const m of v.discovery.models) ids.add(m.id);
      this.#knownModels = { views, ids };
    }
    return this.#knownModels.ids.has(model);
  }

  /** Refresh-on-miss: re-list the nodes that could change the answer, waiting up to miss_wait. */
  async #refreshOnMiss(req: RouteRequest): Promise<boolean> {
    const { excluded } = filterCandidates(req, this.registry.snapshot(), this.filters);
    const names = nodesWorthRefreshing(excluded);
    if (names.length === 0) return false;
    const refreshed = this.discoverer.refresh(names);
    const waitMs = this.#config.discovery.missWaitMs;
    if (waitMs <= 0) return false;
    const timedOut = sleep(this.clock, waitMs).then(() => false);
    return Promise.race([refreshed.then(() => true), timedOut]);
  }
}
