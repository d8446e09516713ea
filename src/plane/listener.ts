// Every listener of a gateway is made here: the request plane's public one (shared by the workers
// through SO_REUSEPORT), and the main thread's admin and relay listeners, with the same limits. One
// drain for all of them: stop taking connections, close idle keep-alive sockets while requests
// finish, and every socket when they are done or the drain time is up.

import type { IncomingMessage, Server } from 'node:http';
import type { AddressInfo, ListenOptions } from 'node:net';
import { sleep, type Clock } from '#src/core/clock.ts';
import type { ServerConfig } from '#src/config/types.ts';
import { ActiveRequests, createHttpServer, type EndpointsInForce } from '#src/proxy/index.ts';

/** Node's default is 5 s; a client pool reusing a socket just as it closes would see resets. */
const KEEP_ALIVE_TIMEOUT_MS = 65_000;
const DRAIN_POLL_MS = 25;

export interface ListenerOptions {
  /** The table in force, read at each request. */
  readonly endpoints: EndpointsInForce;
  readonly host: string;
  readonly port: number;
  /** Bind the address other threads bind too (the kernel spreads connections); request workers only. */
  readonly reusePort: boolean;
  readonly limits: Pick<ServerConfig, 'requestTimeoutMs' | 'headerTimeoutMs' | 'maxHeaderBytes' | 'listenBacklog'>;
  /** Counts the requests in progress (one counter may be shared by several listeners). */
  readonly activeRequests: ActiveRequests;
  readonly onHandlerError: (error: unknown, req: IncomingMessage) => void;
}

export interface Listening {
  readonly server: Server;
  readonly address: AddressInfo;
}

/** Pure: what `server.listen()` is given — the address, port sharing and the accept queue's length. */
export function listenArguments(options: Pick<ListenerOptions, 'host' | 'port' | 'reusePort' | 'limits'>): ListenOptions {
  return { host: options.host, port: options.port, reusePort: options.reusePort, backlog: options.limits.listenBacklog };
}

export function listenOn(options: ListenerOptions): Promise<Listening> {
  const { limits } = options;
  const server = createHttpServer({
    endpoints: options.endpoints,
    activeRequests: options.activeRequests,
    onHandlerError: options.onHandlerError,
    requestTimeoutMs: limits.requestTimeoutMs,
    headersTimeoutMs: limits.headerTimeoutMs,
    keepAliveTimeoutMs: KEEP_ALIVE_TIMEOUT_MS,
    maxHeaderBytes: limits.maxHeaderBytes,
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(listenArguments(options), () => {
      server.off('error', reject);
      resolve({ server, address: server.address() as AddressInfo });
    });
  });
}

export interface DrainOptions {
  readonly servers: readonly Server[];
  readonly active: () => number;
  readonly clock: Clock;
  /** Monotonic ms after which requests still in flight are cut. */
  readonly deadlineMs: number;
  /** Told how many requests were cut at the deadline. */
  readonly onTimeout: (active: number) => void;
}

/** Stops the servers taking connections and waits for their requests, up to the deadline. */
export async function drainServers(options: DrainOptions): Promise<void> {
  const { servers, active, clock } = options;
  const closed = Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  while (active() > 0 && clock.monotonicMs() < options.deadlineMs) {
    for (const server of servers) server.closeIdleConnections();
    await sleep(clock, DRAIN_POLL_MS);
  }
  if (active() > 0) options.onTimeout(active());
  for (const server of servers) server.closeAllConnections();
  await closed;
}
