// Every collaborator of one gateway instance, built in one place, and the current config they
// read. Loops report to the registry; events feed metrics, logs, passive health and the scheduler.

import { systemClock, type Clock } from '#src/core/clock.ts';
import { detach } from '#src/core/detach.ts';
import { OneAtATime } from '#src/core/one-at-a-time.ts';
import { EventBus } from '#src/core/events.ts';
import { diffConfig, diffNodes, type GatewayConfig } from '#src/config/index.ts';
import { NodeLoops, NodeRegistry, sendWake, WakeManager, type RegistryEvents } from '#src/nodes/index.ts';
import {
  requestSettings,
  upstreamVerdict,
  type EndpointTable,
  type ProxyEvents,
  type RequestSettings,
} from '#src/proxy/index.ts';
import { inThreadPorts, type RequestPorts } from '#src/ports/index.ts';
import { defaultFilters, policyPerRequest, type PolicySet } from '#src/routing/index.ts';
import { onRoomMayOpen, Scheduler } from '#src/scheduler/index.ts';
import { GatewayMetrics } from '#src/metrics/prometheus.ts';
import { subscribeTransitionLogs } from '#src/logs/transition-log.ts';
import { RequestLog } from '#src/logs/request-log.ts';
import { DashboardHub } from '#src/admin/index.ts';
import { TenantLedger, type TenantsReport } from '#src/tenants/index.ts';
import type { GatewayOptions, ReloadOutcome } from './options.ts';
import { nextConfig } from './next-config.ts';
import { policyContextFor } from '#src/routing/policy-context.ts';
import { ModelNames } from '#src/metrics/model-names.ts';
import { meshPartFor, type MeshPart } from './mesh-part.ts';
import { adminTable, type ListenerFigures } from './endpoints.ts';
import { PlaneHostFigures, type PlaneHosts } from './plane-hosts.ts';
import { publishNotice } from './scheduler-notices.ts';
import { UsagePart, type UsageStopOutcome } from '#src/tenants/usage-part.ts';
import { ModelsPart } from './models-part.ts';
import { TenantsView } from '#src/tenants/tenants-view.ts';
import { ClusterPart } from './cluster-part.ts';

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
  /** `[cluster]`: slot leases shared with the other replicas (undefined = alone); `admission` is what request planes admit through. */
  readonly cluster: ClusterPart | undefined;
  readonly admission: Pick<Scheduler, 'admit' | 'hasAlternative' | 'routerRooms'>;
  /** The one limits ledger of the gateway: every tenant admission, from this thread or a worker, is judged here. */
  readonly ledger: TenantLedger;
  readonly #wakes: WakeManager;
  /** The operator dashboard's traffic history, transition log and live feed. */
  readonly dashboard: DashboardHub;
  /** Federation (`[mesh]`): this site's published set and what it knows of the others. */
  readonly mesh: MeshPart;
  /** The request plane's hosts' figures, summed (one plane here, or every worker's). */
  readonly #planes: PlaneHostFigures;
  /** Budgets across restarts: the usage store in [server] state_dir and its flusher. */
  readonly usage: UsagePart;
  /** Model loads and unloads: the admin API's and the reconciler's (warm, preload, pin). */
  readonly models: ModelsPart;
  /** `[log] requests`: one line per request, written by this thread alone. */
  readonly requestLog: RequestLog;
  readonly #lifetime = new AbortController();
  readonly #unsubscribeLogs: () => void;
  #config: GatewayConfig;
  /** What a request arriving now runs under; rebuilt on reload, read once per request. */
  #settings: RequestSettings;
  readonly #reloads = new OneAtATime();
  /** GET /admin/tenants: the tenants in force, the ledger's figures, every model's queue by class and tenant. */
  readonly #tenantsView = new TenantsView({
    tenants: () => this.#config.tenants,
    figures: (name) => this.ledger.figures(name),
    queues: () => this.scheduler.queueReport(),
  });
  readonly #modelNames = new ModelNames(
    () => this.#config,
    () => this.registry.views(),
    () => this.mesh.sites(),
  );

  constructor(options: GatewayOptions) {
    this.options = options;
    this.clock = options.clock ?? systemClock;
    // First: a state file this build cannot use stops the start before anything else is built.
    this.usage = new UsagePart(options.config, { clock: this.clock, logger: options.logger, faults: options.stateFaults });
    this.#planes = new PlaneHostFigures(() => this.mesh.link !== undefined);
    this.#config = options.config;
    this.#policies = policyPerRequest(policyContextFor(() => this.#config, options.random ?? Math.random));
    this.#settings = requestSettings(options.config);
    this.ledger = new TenantLedger(() => this.clock.now(), options.config.tenants);
    // Today's stored usage before anything is admitted (tokens_per_day is judged by the day's sum).
    this.usage.connect(this.ledger);
    const onListenerError = (error: unknown): void => options.logger.error({ err: error }, 'event listener failed');
    this.#registryEvents = new EventBus<RegistryEvents>(onListenerError);
    this.proxyEvents = new EventBus<ProxyEvents>(onListenerError);
    this.requestLog = new RequestLog(options.config.log, {
      clock: this.clock,
      events: this.proxyEvents,
      stdout: options.requestLogStdout ?? process.stdout,
      onError: (error) =>
        options.logger.error({ err: error }, 'request log write failed; lines are dropped and counted until it works again'),
    });
    this.registry = new NodeRegistry({
      clock: this.clock,
      events: this.#registryEvents,
      failThreshold: options.config.health.failThreshold,
      onLeaseReturned: (returned) => this.scheduler.leaseReturned(returned),
      connectionLimit: options.config.upstream.maxConnections,
    });
    this.#loops = new NodeLoops({
      clock: this.clock,
      config: () => this.#config,
      registry: this.registry,
      events: this.#registryEvents,
      onError: (error, fields, what) => options.logger.error({ err: error, ...fields }, `${what} failed`),
    });
    this.#metrics = new GatewayMetrics({
      registryEvents: this.#registryEvents,
      proxyEvents: this.proxyEvents,
      nodeViews: () => this.registry.views(),
      queueDepths: () => this.scheduler.queueDepths(),
      leases: () => this.registry.leaseEntries(),
      modelLabel: (model) => this.#modelNames.boundedLabel(model),
      upstreamConnections: () => this.#planes.upstream(),
      prefixHits: () => this.#policies.prefixHits(),
      tenants: { inFlight: () => this.ledger.inFlight(), queues: () => this.scheduler.queueReport() },
      requestLog: () => this.requestLog.figures(),
      stateStore: () => this.usage.health(),
      ...(options.config.tracing === undefined ? {} : { traceSpans: () => this.#planes.spans() }),
    });
    this.models = new ModelsPart({
      clock: this.clock,
      logger: options.logger,
      config: () => this.#config,
      registry: this.registry,
      queueDepths: () => this.scheduler.queueDepths(),
      events: this.#registryEvents,
      refresh: (nodes) => this.#loops.refresh(nodes, { fresh: true }),
      switchEnded: () => this.scheduler.fleetChanged(),
    });
    const noticeSinks = {
      events: this.proxyEvents,
      label: (m: string) => this.#modelNames.requestLabel(m),
      logger: options.logger,
    };
    this.scheduler = new Scheduler({
      clock: this.clock,
      filters: defaultFilters(),
      policy: this.#policies,
      effects: {
        snapshot: () => this.registry.snapshot(),
        claim: (node, model, tokens) => this.registry.claim(node, model, tokens),
        refreshListings: (nodes) => this.#loops.refresh(nodes),
        wake: (node, reason) => this.#detach(this.#wakes.wake(node, reason), 'wake'),
        notify: (notice) => publishNotice(noticeSinks, notice),
      },
      models: this.models,
    });
    onRoomMayOpen(this.#registryEvents, () => this.scheduler.fleetChanged());
    this.cluster =
      options.config.cluster === undefined
        ? undefined
        : new ClusterPart(options.config.cluster, {
            clock: this.clock,
            logger: options.logger,
            metrics: this.#metrics.registry,
            ledger: this.ledger,
            tenantsReport: () => this.#tenantsView.report(),
            holds: (store, replica) => this.models.reconciler.shareHolds(store, replica),
            switches: {
              book: this.models.book,
              changed: (node) =>
                void this.#loops
                  .refresh([node], { fresh: true })
                  .catch(() => undefined)
                  .finally(() => this.scheduler.fleetChanged()),
            },
          });
    this.admission = this.cluster === undefined ? this.scheduler : this.cluster.admission(this.scheduler);
    // Passive health: real requests' outcomes can eject a node; an ejected node is re-probed at once.
    this.proxyEvents.on('proxy:attempt', (e) => {
      const { ejectAfterFailures, ejectForMs } = this.#config.upstream;
      this.registry.observeUpstream(e.node, upstreamVerdict(e.result), { ejectAfterFailures, ejectForMs });
    });
    this.#wakes = new WakeManager({
      clock: this.clock,
      registry: this.registry,
      send: this.cluster?.wakeSender(sendWake) ?? sendWake,
      probeFaster: (node, durationMs) => this.#loops.probeFaster(node, durationMs),
      onResult: (node, result, detail) => this.#registryEvents.emit('node:wake', { node, result, ...detail }),
    });
    this.#unsubscribeLogs = subscribeTransitionLogs({
      logger: options.logger,
      registryEvents: this.#registryEvents,
      proxyEvents: this.proxyEvents,
      expectedModels: (nodeName) => this.#modelNames.expectedFor(nodeName),
    });
    this.mesh = meshPartFor({
      options,
      clock: this.clock,
      registryEvents: this.#registryEvents,
      registry: this.registry,
      scheduler: this.scheduler,
      metrics: this.#metrics,
      publishGate: options.config.mesh === undefined ? undefined : this.cluster?.publishGate(),
      config: () => this.#config,
    });
    this.dashboard = new DashboardHub({
      clock: this.clock,
      registryEvents: this.#registryEvents,
      proxyEvents: this.proxyEvents,
      registry: this.registry,
      queueDepths: () => this.scheduler.queueDepths(),
      aliases: () => this.#settings.catalog.aliases,
      mesh: { events: this.mesh.events, sites: () => this.mesh.admin() },
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
        requests: this.requestLog.recent,
        mesh: this.mesh,
        reload: () => this.reload(),
        wake: (node) => this.#wakes.wake(node, 'manual'),
        upstream: () => this.#planes.upstream(),
        upstreamSites: () => this.#planes.upstreamSites(),
        heldBytes: () => this.#planes.heldBytes(),
        tenants: () => this.tenantsReport(),
        models: this.models,
        cluster: () => this.cluster?.report(),
        state: () => this.usage.health(),
      },
      listeners,
    );
  }

  /** GET /admin/tenants: the tenants in force with the ledger's figures and the queues (with [cluster]: the whole site's). */
  tenantsReport(): TenantsReport | Promise<TenantsReport> {
    return this.cluster?.tenantsReport() ?? this.#tenantsView.report();
  }

  /** The ports a request plane in this thread reaches the control plane through. */
  ports(): RequestPorts {
    return inThreadPorts({
      scheduler: this.admission,
      ledger: this.ledger,
      admitTenant: this.cluster?.tenantAdmission(),
      registry: this.registry,
      relist: (node) => this.relist(node),
      sites: this.mesh.link,
    });
  }

  /** A bounded metrics label for a requested model id. */
  requestLabel(model: string): string {
    return this.#modelNames.requestLabel(model);
  }

  /** A node said it does not have a model its listing showed: re-list it. */
  relist(node: string): void {
    this.#detach(this.#loops.refresh([node]), 'model refresh');
  }

  startLoops(): void {
    this.#loops.start(this.#lifetime.signal);
    this.usage.start();
    this.models.start();
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
        // Only now that every request plane judges tenants by the new config (workers confirmed
        // it): a worker still seeing a tenant unlimited admits without asking, so a limit the
        // tenant just gained applies once none can. Every counter is kept by tenant name.
        this.ledger.configure(this.#config.tenants);
      }
      this.dashboard.noteReload(outcome);
      return outcome;
    });
  }

  async #reloadNow(): Promise<ReloadOutcome> {
    const { logger } = this.options;
    const previous = this.#config;
    const loaded = await nextConfig(this.options, logger, previous);
    if (!loaded.ok) return loaded;
    const next = loaded.config;
    // One diff, one verdict per node: every component acts on the same change.
    const change = diffConfig(previous, next);
    this.#config = next;
    this.#settings = requestSettings(next);
    this.registry.setFailThreshold(next.health.failThreshold);
    this.registry.setConnectionLimit(next.upstream.maxConnections);
    this.registry.applyChange(change);
    this.#loops.reconfigure(next, change);
    this.mesh.reconfigure(previous.mesh, next.mesh);
    logger.info({ nodes: next.nodes.map((n) => n.name) }, 'config reloaded');
    return { ok: true };
  }

  async stop(): Promise<UsageStopOutcome> {
    this.#lifetime.abort();
    await Promise.all([this.#loops.stop(), this.mesh.stop(), this.models.stop(), this.cluster?.stop()]);
    this.#unsubscribeLogs();
    this.dashboard.close();
    this.#metrics.close();
    // After the drain (Gateway.close): the last requests' usage is in the final write (saved or not: the answer), their lines in the request log.
    const usage = await this.usage.stop();
    await this.requestLog
      .close()
      .catch((error: unknown) => this.options.logger.error({ err: error }, 'request log close failed'));
    return usage;
  }
}
