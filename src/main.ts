// Composition root: builds the gateway's collaborators (gateway/parts.ts), serves HTTP on the main
// listener (and the admin listener when configured), and applies reloads and graceful shutdown.

import type { Logger } from 'pino';
import { sleep, type Clock } from '#src/core/clock.ts';
import type { ConfigProblem, GatewayConfig, ListenAddress, LoadResult } from '#src/config/types.ts';
import type { NodeRegistry } from '#src/nodes/index.ts';
import { createHttpServer, listen, urlOf, type EndpointTable, type GatewayHttpServer, type Handler } from '#src/proxy/index.ts';
import { GatewayParts } from '#src/gateway/parts.ts';

export interface GatewayOptions {
  readonly config: GatewayConfig;
  readonly logger: Logger;
  readonly clock?: Clock;
  /** Re-reads the config for SIGHUP and POST /admin/reload; absent = reload unsupported. */
  readonly loadConfig?: () => Promise<LoadResult>;
}

export type ReloadOutcome = { readonly ok: true } | { readonly ok: false; readonly problems: readonly ConfigProblem[] };

function merged(...tables: EndpointTable[]): EndpointTable {
  const out = new Map<string, ReadonlyMap<string, Handler>>();
  for (const table of tables) for (const [path, byMethod] of table) out.set(path, byMethod);
  return out;
}

export class Gateway {
  readonly url: string;
  /** The admin listener's URL when [admin] listen is set. */
  readonly adminUrl: string | undefined;
  readonly registry: NodeRegistry;
  readonly #servers: readonly GatewayHttpServer[];
  readonly #parts: GatewayParts;
  #closed = false;

  private constructor(urls: { url: string; adminUrl: string | undefined }, servers: readonly GatewayHttpServer[], parts: GatewayParts) {
    this.url = urls.url;
    this.adminUrl = urls.adminUrl;
    this.#servers = servers;
    this.#parts = parts;
    this.registry = parts.registry;
  }

  static async start(options: GatewayOptions): Promise<Gateway> {
    const parts = new GatewayParts(options);
    const { server: limits, admin } = options.config;
    const serve = async (table: () => EndpointTable, address: ListenAddress): Promise<{ server: GatewayHttpServer; url: string }> => {
      const server = createHttpServer({
        endpoints: table,
        onHandlerError: (error, req) => options.logger.error({ err: error, path: req.url }, 'request handler failed'),
        requestTimeoutMs: limits.requestTimeoutMs,
        headersTimeoutMs: limits.headerTimeoutMs,
        keepAliveTimeoutMs: 65_000,
        maxHeaderBytes: limits.maxHeaderBytes,
      });
      return { server, url: urlOf(await listen(server, address.host, address.port)) };
    };
    const all = merged(parts.endpoints.public, parts.endpoints.admin);
    const main = await serve(() => (admin.listen === undefined ? all : parts.endpoints.public), limits.listen);
    const adminServer = admin.listen === undefined ? undefined : await serve(() => parts.endpoints.admin, admin.listen);
    const gateway = new Gateway(
      { url: main.url, adminUrl: adminServer?.url },
      adminServer === undefined ? [main.server] : [main.server, adminServer.server],
      parts,
    );
    parts.activeRequests = () => gateway.#servers.reduce((n, s) => n + s.activeRequests(), 0);
    parts.startLoops();
    options.logger.info({ url: gateway.url, admin_url: gateway.adminUrl, nodes: options.config.nodes.length }, 'gateway listening');
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
    const closed = Promise.all(this.#servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    const active = (): number => this.#servers.reduce((n, s) => n + s.activeRequests(), 0);
    log.info({ active: active() }, 'draining: finishing in-flight requests');
    // Keep-alive sockets would hold the servers open indefinitely: close each one once it is idle,
    // and all of them when the in-flight requests are done or the drain time is up.
    const deadline = clock.monotonicMs() + this.#parts.config().server.drainTimeoutMs;
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
