// Composition root: builds the gateway's collaborators (gateway/parts.ts) and its endpoint tables
// (gateway/endpoints.ts), serves the public table on the main listener and the admin table on the
// admin listener when one is configured (else on the main one too), and applies reloads and
// graceful shutdown. With [server] workers > 1 the public table is served by request worker
// threads (src/workers/) and this thread keeps the control plane, every lease and admin.

import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import { availableParallelism } from 'node:os';
import { sleep } from '#src/core/clock.ts';
import type { ListenAddress } from '#src/config/types.ts';
import { MESH_OPEN_TO_CLIENTS, meshOpenToClients } from '#src/config/index.ts';
import type { NodeRegistry } from '#src/nodes/index.ts';
import { ActiveRequests, createHttpServer, listen, mergeTables, urlOf, type EndpointTable } from '#src/proxy/index.ts';
import { GatewayParts } from '#src/gateway/parts.ts';
import { gatewayEndpoints, type EndpointTables } from '#src/gateway/endpoints.ts';
import type { GatewayOptions, ReloadOutcome } from '#src/gateway/options.ts';
import { adminOpenToNetwork } from '#src/gateway/admin-exposure.ts';
import { acceptRelayed, RequestWorkers } from '#src/workers/index.ts';

type Serve = (table: () => EndpointTable, address: ListenAddress) => Promise<{ server: Server; url: string }>;

/** What the worker start-up shares with the one-thread start-up in Gateway.start. */
interface WorkersStart {
  readonly options: GatewayOptions;
  readonly parts: GatewayParts;
  readonly endpoints: EndpointTables;
  readonly activeRequests: ActiveRequests;
  readonly serve: Serve;
  readonly count: number;
  /** Filled once the workers listen (the endpoint figures read it). */
  readonly workers: { started: RequestWorkers | undefined };
}

export class Gateway {
  readonly url: string;
  /** The admin listener's URL when [admin] listen is set. */
  readonly adminUrl: string | undefined;
  readonly registry: NodeRegistry;
  /** The dashboard's live feed (its client count, and ending every stream). */
  readonly liveFeed: Pick<GatewayParts['dashboard']['feed'], 'clientCount' | 'droppedClients' | 'close'>;
  readonly #servers: readonly Server[];
  readonly #activeRequests: ActiveRequests;
  readonly #parts: GatewayParts;
  /** The request workers when [server] workers > 1 (this thread then keeps the control plane and every lease). */
  readonly #workers: RequestWorkers | undefined;
  #closed = false;

  private constructor(
    urls: { url: string; adminUrl: string | undefined },
    servers: readonly Server[],
    activeRequests: ActiveRequests,
    parts: GatewayParts,
    workers?: RequestWorkers,
  ) {
    this.url = urls.url;
    this.adminUrl = urls.adminUrl;
    this.#servers = servers;
    this.#activeRequests = activeRequests;
    this.#parts = parts;
    this.#workers = workers;
    this.registry = parts.registry;
    this.liveFeed = parts.dashboard.feed;
  }

  static async start(options: GatewayOptions): Promise<Gateway> {
    const parts = new GatewayParts(options);
    const activeRequests = new ActiveRequests();
    const workers: { started: RequestWorkers | undefined } = { started: undefined };
    const inWorkers = (): number => workers.started?.figures().reduce((sum, f) => sum + f.activeRequests, 0) ?? 0;
    const { server: limits, admin } = options.config;
    const count = limits.workers === 'auto' ? availableParallelism() : limits.workers;
    const endpoints = gatewayEndpoints(parts, {
      activeRequests: () => activeRequests.count() + inWorkers(),
      ...(count > 1 ? { workers: () => workers.started?.status() ?? [] } : {}),
    });
    const serve: Serve = async (table, address) => {
      const server = createHttpServer({
        endpoints: table,
        activeRequests,
        onHandlerError: (error, req) => options.logger.error({ err: error, path: req.url }, 'request handler failed'),
        requestTimeoutMs: limits.requestTimeoutMs,
        headersTimeoutMs: limits.headerTimeoutMs,
        keepAliveTimeoutMs: 65_000,
        maxHeaderBytes: limits.maxHeaderBytes,
      });
      return { server, url: urlOf(await listen(server, address.host, address.port)) };
    };
    if (count > 1) return Gateway.#startWithWorkers({ options, parts, endpoints, activeRequests, serve, count, workers });
    const all = mergeTables(endpoints.public, endpoints.admin);
    const main = await serve(() => (admin.listen === undefined ? all : endpoints.public), limits.listen);
    const adminServer = admin.listen === undefined ? undefined : await serve(() => endpoints.admin, admin.listen);
    const gateway = new Gateway(
      { url: main.url, adminUrl: adminServer?.url },
      adminServer === undefined ? [main.server] : [main.server, adminServer.server],
      activeRequests,
      parts,
    );
    return Gateway.#begin(gateway, options);
  }

  /**
   * [server] workers > 1: the workers share the public listener; what only this thread can answer
   * (admin, /metrics, the dashboard) reaches it through a loopback relay listener, unless
   * [admin] listen is set (this thread then serves that listener itself).
   */
  static async #startWithWorkers(c: WorkersStart): Promise<Gateway> {
    const { options, parts, endpoints, serve } = c;
    const admin = options.config.admin;
    const secret = randomBytes(32).toString('base64url');
    const relayed: EndpointTable = admin.listen === undefined ? endpoints.admin : new Map();
    const relayTable = acceptRelayed(relayed, secret);
    const relay = relayed.size === 0 ? undefined : await serve(() => relayTable, { host: '127.0.0.1', port: 0 });
    const adminServer = admin.listen === undefined ? undefined : await serve(() => endpoints.admin, admin.listen);
    const servers = [relay?.server, adminServer?.server].filter((server) => server !== undefined);
    const started = await RequestWorkers.start({
      count: c.count,
      clock: parts.clock,
      logger: options.logger,
      config: () => parts.config(),
      registry: parts.registry,
      scheduler: parts.scheduler,
      events: parts.proxyEvents,
      modelLabel: parts.inference.modelLabel,
      onModelVanished: parts.inference.onModelVanished,
      relay: { url: relay?.url ?? '', secret },
      relayed: [...relayed].map(([path, byMethod]) => [path, [...byMethod.keys()]] as const),
      // [mesh]: each worker forwards and verifies with the key and the remote sites this thread's mesh part holds.
      mesh: options.config.mesh === undefined ? undefined : parts.mesh,
    }).catch(async (error: unknown) => {
      // No worker listens: release what this thread opened before saying so.
      for (const server of servers) server.close();
      await parts.stop();
      throw error;
    });
    c.workers.started = started;
    parts.attachWorkers({ figures: () => started.figures(), reloaded: () => started.syncConfig() });
    const { host } = options.config.server.listen;
    const url = urlOf({ address: host, port: started.port, family: host.includes(':') ? 'IPv6' : 'IPv4' });
    return Gateway.#begin(new Gateway({ url, adminUrl: adminServer?.url }, servers, c.activeRequests, parts, started), options);
  }

  static async #begin(gateway: Gateway, options: GatewayOptions): Promise<Gateway> {
    const { server: limits, admin } = options.config;
    gateway.#parts.startLoops();
    try {
      await gateway.#parts.mesh.start();
      // The workers get the key now rather than at their next sync (until then they cannot sign a forward).
      gateway.#workers?.syncMesh();
    } catch (error) {
      await gateway.close();
      throw error;
    }
    const workers = limits.workers === 'auto' ? `auto (${availableParallelism()})` : limits.workers;
    options.logger.info({ url: gateway.url, admin_url: gateway.adminUrl, nodes: options.config.nodes.length, workers }, 'gateway listening');
    if (adminOpenToNetwork({ tokenSet: admin.token !== undefined, ownListener: admin.listen !== undefined, mainHost: limits.listen.host })) {
      options.logger.warn(
        { listen: `${limits.listen.host}:${limits.listen.port}` },
        'admin reads, /metrics and the detailed /health are open to anyone who reaches this listener: set [admin] token, or [admin] listen on a private address',
      );
    }
    if (meshOpenToClients(options.config)) options.logger.warn({ site: options.config.mesh?.site }, MESH_OPEN_TO_CLIENTS);
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

  /**
   * Graceful stop: no new connections, in-flight requests finish (up to server.drain_timeout),
   * then every connection closes and every loop stops.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const clock = this.#parts.clock;
    const log = this.#parts.options.logger;
    // The dashboard's live streams never finish on their own: end them so they do not hold the drain.
    this.#parts.dashboard.feed.close();
    const active = (): number => this.#activeRequests.count();
    log.info({ active: active(), workers: this.#workers?.status().length }, 'draining: finishing in-flight requests');
    // One drain_timeout for all: the workers' drain and then this thread's own listeners.
    const deadline = clock.monotonicMs() + this.#parts.config().server.drainTimeoutMs;
    // Workers drain first, while this thread still answers their admissions and releases.
    if (this.#workers !== undefined) await this.#workers.drain();
    const closed = Promise.all(this.#servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    // Keep-alive sockets would hold the servers open indefinitely: close each one once it is idle,
    // and all of them when the in-flight requests are done or the drain time is up.
    while (active() > 0 && clock.monotonicMs() < deadline) {
      for (const server of this.#servers) server.closeIdleConnections();
      await sleep(clock, 25);
    }
    if (active() > 0) log.warn({ active: active() }, 'drain timeout: closing requests still in flight');
    for (const server of this.#servers) server.closeAllConnections();
    await closed;
    await this.#parts.stop();
  }
}
