// Composition root: builds the gateway's collaborators (gateway/parts.ts), hosts the request plane
// (src/plane/) — once in this thread with `[server] workers = 1`, else in N request worker threads
// (src/workers/) while this thread keeps the control plane, every lease and admin — serves the admin
// table on its own listener when one is configured (else beside the public table), and applies
// reloads and graceful shutdown.

import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import { availableParallelism } from 'node:os';
import { sleep } from '#src/core/clock.ts';
import type { ListenAddress } from '#src/config/types.ts';
import type { NodeRegistry } from '#src/nodes/index.ts';
import { ActiveRequests, urlOf, type EndpointTable } from '#src/proxy/index.ts';
import {
  buildRequestPlane,
  drainServers,
  listenOn,
  unreachableSites,
  type PlaneLog,
  type RequestPlane,
} from '#src/plane/index.ts';
import { GatewayParts } from '#src/gateway/parts.ts';
import { configWarnings } from '#src/config-tables.ts';
import { featureModules, type UsageStopOutcome } from '#src/gateway/features.ts';
import type { GatewayOptions, ReloadOutcome } from '#src/gateway/options.ts';
import { adminOpenToNetwork } from '#src/admin/admin-exposure.ts';
import { ACCEPT_QUEUE_CAPPED, acceptQueueCapped, readSomaxconn } from '#src/plane/accept-queue.ts';
import { acceptRelayed, startRequestWorkers, type RequestWorkers } from '#src/workers/index.ts';

/** Opens one of this thread's own listeners (admin, relay) with the gateway's limits. */
type Serve = (table: EndpointTable, address: ListenAddress) => Promise<{ server: Server; url: string }>;

/** Who serves the public listener: this thread's request plane (`workers = 1`) or the workers. */
type PlaneHosting =
  { readonly kind: 'in-thread'; readonly plane: RequestPlane } | { readonly kind: 'workers'; readonly workers: RequestWorkers };

export class Gateway {
  readonly url: string;
  /** The admin listener's URL when [admin] listen is set. */
  readonly adminUrl: string | undefined;
  readonly registry: NodeRegistry;
  /** What the request path reports, to subscribe to (every request's end with what its answer used), from every worker. */
  readonly requestEvents: Pick<GatewayParts['proxyEvents'], 'on'>;
  /** The dashboard's live feed (its client count, ending every stream; a test may stand in for a view's source). */
  readonly liveFeed: Pick<GatewayParts['dashboard']['feed'], 'clientCount' | 'droppedClients' | 'close' | 'attachPanels'>;
  /** This thread's own listeners beside the public one: the admin listener, the workers' relay. */
  readonly #servers: readonly Server[];
  /** Requests those listeners are answering. */
  readonly #ownActive: ActiveRequests;
  readonly #parts: GatewayParts;
  readonly #hosting: PlaneHosting;
  /** The stop's outcome, once shutdown() or close() was called (a second call answers the same). */
  #closed: Promise<UsageStopOutcome> | undefined;

  private constructor(
    urls: { url: string; adminUrl: string | undefined },
    own: { servers: readonly Server[]; active: ActiveRequests },
    parts: GatewayParts,
    hosting: PlaneHosting,
  ) {
    this.url = urls.url;
    this.adminUrl = urls.adminUrl;
    this.#servers = own.servers;
    this.#ownActive = own.active;
    this.#parts = parts;
    this.#hosting = hosting;
    this.registry = parts.registry;
    this.liveFeed = parts.dashboard.feed;
    this.requestEvents = parts.proxyEvents;
  }

  static async start(options: GatewayOptions): Promise<Gateway> {
    const parts = new GatewayParts(options, await featureModules(options.config, options));
    const { server: limits } = options.config;
    const count = limits.workers === 'auto' ? availableParallelism() : limits.workers;
    const log: PlaneLog = (level, fields, message) => options.logger[level](fields, message);
    const ownActive = new ActiveRequests();
    const serve: Serve = async (table, address) => {
      const { server, address: bound } = await listenOn({
        endpoints: { table },
        host: address.host,
        port: address.port,
        reusePort: false,
        limits,
        activeRequests: ownActive,
        onHandlerError: (error, req) => log('error', { err: error, path: req.url }, 'request handler failed'),
      });
      return { server, url: urlOf(bound) };
    };
    if (count > 1) return Gateway.#startWithWorkers(options, parts, { serve, ownActive, count });
    // One thread: this thread hosts the request plane, over the Scheduler and the registry themselves.
    const tracer = await parts.tracer('main', (fields, message) => log('warn', fields, message));
    const plane = await buildRequestPlane(parts.ports(), {
      clock: parts.clock,
      config: options.config,
      events: parts.proxyEvents,
      log,
      modelLabel: parts.requestLabel,
      hosts: 1,
      tracer,
    });
    parts.attachPlane({ figures: () => [plane.figures()], reloaded: () => plane.reconfigure(parts.config()) });
    const admin = parts.adminTable({
      activeRequests: () => plane.figures().activeRequests + ownActive.count(),
      unreachableSites: () => unreachableSites(plane.parts),
    });
    const ownListener = options.config.admin.listen;
    const mainHealth = parts.mainListenerHealth();
    const listened = await plane
      .listen(limits.listen, ownListener === undefined ? admin : mainHealth, false)
      .then(async (main) => ({ main, adminServer: ownListener === undefined ? undefined : await serve(admin, ownListener) }))
      .catch(async (error: unknown) => {
        // Nothing serves: release what the parts hold (the state file among them) before saying so.
        await plane.drain(parts.clock.monotonicMs(), { servers: [], active: () => 0 }).catch(() => undefined);
        await parts.stop();
        throw error;
      });
    const { main, adminServer } = listened;
    const gateway = new Gateway(
      { url: urlOf(main), adminUrl: adminServer?.url },
      { servers: adminServer === undefined ? [] : [adminServer.server], active: ownActive },
      parts,
      { kind: 'in-thread', plane },
    );
    return Gateway.#begin(gateway, options);
  }

  /**
   * [server] workers > 1: each worker hosts the request plane on the shared public listener; what
   * only this thread can answer (admin, /metrics, the dashboard) reaches it through a loopback
   * relay listener, unless [admin] listen is set (this thread then serves that listener itself).
   */
  static async #startWithWorkers(
    options: GatewayOptions,
    parts: GatewayParts,
    own: { serve: Serve; ownActive: ActiveRequests; count: number },
  ): Promise<Gateway> {
    const { serve, ownActive } = own;
    const started: { workers: RequestWorkers | undefined } = { workers: undefined };
    const inWorkers = (): number => started.workers?.figures().reduce((sum, f) => sum + f.activeRequests, 0) ?? 0;
    const admin = parts.adminTable({
      activeRequests: () => ownActive.count() + inWorkers(),
      workers: () => started.workers?.status() ?? [],
    });
    const ownListener = options.config.admin.listen;
    const secret = randomBytes(32).toString('base64url');
    // With [admin] listen, only /health is relayed (with a state_dir): its status counts the state store, this thread's.
    const relayed: EndpointTable = ownListener === undefined ? admin : parts.mainListenerHealth();
    const relayTable = acceptRelayed(relayed, secret);
    const relay = relayed.size === 0 ? undefined : await serve(relayTable, { host: '127.0.0.1', port: 0 });
    const adminServer = ownListener === undefined ? undefined : await serve(admin, ownListener);
    const servers = [relay?.server, adminServer?.server].filter((server) => server !== undefined);
    const workers = await startRequestWorkers({
      count: own.count,
      clock: parts.clock,
      logger: options.logger,
      config: () => parts.config(),
      ...parts.workerOwner(),
      events: parts.proxyEvents,
      modelLabel: parts.requestLabel,
      relay: { url: relay?.url ?? '', secret },
      relayed: [...relayed].map(([path, byMethod]) => [path, [...byMethod.keys()]] as const),
    }).catch(async (error: unknown) => {
      // No worker listens: release what this thread opened before saying so.
      for (const server of servers) server.close();
      await parts.stop();
      throw error;
    });
    started.workers = workers;
    parts.attachPlane({ figures: () => workers.figures(), reloaded: () => workers.syncConfig() });
    const { host } = options.config.server.listen;
    const url = urlOf({ address: host, port: workers.port, family: host.includes(':') ? 'IPv6' : 'IPv4' });
    return Gateway.#begin(
      new Gateway({ url, adminUrl: adminServer?.url }, { servers, active: ownActive }, parts, { kind: 'workers', workers }),
      options,
    );
  }

  static async #begin(gateway: Gateway, options: GatewayOptions): Promise<Gateway> {
    const { server: limits, admin } = options.config;
    gateway.#parts.startLoops();
    try {
      await gateway.#parts.startFeatures(gateway.url);
      // The workers get what the started features hold now rather than at their next sync ([mesh]: until the key comes they cannot sign a forward).
      if (gateway.#hosting.kind === 'workers') gateway.#hosting.workers.syncFeatures();
    } catch (error) {
      await gateway.close();
      throw error;
    }
    const workers = limits.workers === 'auto' ? `auto (${availableParallelism()})` : limits.workers;
    options.logger.info(
      { url: gateway.url, admin_url: gateway.adminUrl, nodes: options.config.nodes.length, workers },
      'gateway listening',
    );
    if (
      adminOpenToNetwork({
        tokenSet: admin.token !== undefined,
        ownListener: admin.listen !== undefined,
        mainHost: limits.listen.host,
      })
    ) {
      options.logger.warn(
        { listen: `${limits.listen.host}:${limits.listen.port}` },
        'admin reads, /metrics and the detailed /health are open to anyone who reaches this listener: set [admin] token, or [admin] listen on a private address',
      );
    }
    for (const warning of configWarnings(options.config)) options.logger.warn(warning.fields, warning.message);
    const capped = acceptQueueCapped(limits.listenBacklog, readSomaxconn());
    if (capped !== undefined) options.logger.warn(capped, ACCEPT_QUEUE_CAPPED);
    return gateway;
  }

  reload(): Promise<ReloadOutcome> {
    return this.#parts.reload();
  }

  /** SIGHUP's first step: the request log file is closed and opened again (logrotate moved it), no line lost. */
  reopenLogs(): Promise<void> {
    return this.#parts.reopenLogs();
  }

  /** Resolves once the request log holds the lines of every request finished so far (tests, shutdown). */
  requestLogFlushed(): Promise<void> {
    return this.#parts.logFlushed();
  }

  /**
   * Resolves true once every node has answered (or failed) its first health probe and model
   * listing, false if that takes longer than `timeoutMs`. For the demo and tests; serving does
   * not wait for it (untried nodes take traffic). An aborted `signal` ends the wait (false).
   */
  async firstRoundDone(timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    const clock = this.#parts.clock;
    const deadline = clock.monotonicMs() + timeoutMs;
    const settled = (): boolean =>
      this.registry
        .views()
        .every((v) => v.health.status !== 'unknown' && (v.discovery.phase !== 'untried' || v.discovery.fails > 0));
    while (!settled()) {
      if (clock.monotonicMs() >= deadline || signal?.aborted === true) return false;
      await sleep(clock, 20);
    }
    return true;
  }

  /**
   * Graceful stop: no new connections, in-flight requests finish (up to server.drain_timeout),
   * then every connection closes and every loop stops.
   */
  async close(): Promise<void> {
    await this.shutdown();
  }

  /**
   * close(), answering whether tenant usage was saved to the state file (`saved: false` names the
   * file and the cause, already logged: `switchyard serve` then exits non-zero).
   */
  shutdown(): Promise<UsageStopOutcome> {
    this.#closed ??= this.#close();
    return this.#closed;
  }

  async #close(): Promise<UsageStopOutcome> {
    const clock = this.#parts.clock;
    const log = this.#parts.options.logger;
    const hosting = this.#hosting;
    // The dashboard's live streams never finish on their own: end them so they do not hold the drain.
    this.#parts.dashboard.feed.close();
    const own = { servers: this.#servers, active: () => this.#ownActive.count() };
    const workers = hosting.kind === 'workers' ? hosting.workers.status().length : undefined;
    const planeActive = hosting.kind === 'in-thread' ? hosting.plane.figures().activeRequests : 0;
    log.info({ active: own.active() + planeActive, workers }, 'draining: finishing in-flight requests');
    // One drain_timeout for all: the request plane's hosts and then this thread's own listeners.
    const deadlineMs = clock.monotonicMs() + this.#parts.config().server.drainTimeoutMs;
    if (hosting.kind === 'in-thread') {
      await hosting.plane.drain(deadlineMs, own);
    } else {
      // Workers drain first, while this thread still answers their admissions and releases.
      await hosting.workers.drain();
      const onTimeout = (active: number): void => log.warn({ active }, 'drain timeout: closing requests still in flight');
      await drainServers({ servers: own.servers, active: own.active, clock, deadlineMs, onTimeout });
    }
    return this.#parts.stop();
  }
}
