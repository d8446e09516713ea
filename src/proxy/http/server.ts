// The node:http server: the endpoint table it dispatches over (path → method → handler; the public
// table, proxy/, and the admin table, admin/, are built apart and merged only where one listener
// serves both), the dispatch, and the count of requests its listeners are answering. Handlers come
// from the composition root, so this file knows nothing of metrics or admin; it only dispatches and
// turns thrown errors into answers (endpoint-table.ts and active-requests.ts merged here).

import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServer } from '#src/core/node-http.ts';
import { badRequest, methodNotAllowed, routeNotFound } from '#src/core/errors.ts';
import { hostProblem, parseRequestTarget, type TargetUrl } from '#src/core/request-target.ts';
import { sendError, toGatewayError } from './openai-error.ts';
import { errorDialectFor } from './error-dialect.ts';

// ---- The endpoint table ----------------------------------------------------------------------

/** A handler answers at once (void), or returns what it is waiting on: a promise, or an Answering. */
export type Handler = (req: IncomingMessage, res: ServerResponse, url: TargetUrl) => PromiseLike<void> | void;

/**
 * What a handler that answers through callbacks returns (the inference spine): awaitable like an
 * async handler's promise, without one of its own. The server only asks to be told of a failure
 * (`onFailure`, no promise); a promise is made only for one who awaits it (a forward's verification
 * waits for the request it serves). It ends once: answered, or failed.
 */
export class Answering implements PromiseLike<void> {
  #ended = false;
  #failure: { readonly error: unknown } | undefined;
  #onFailure: ((error: unknown) => void) | undefined;
  #awaited: PromiseWithResolvers<void> | undefined;

  /** Told of the failure (at once if it failed already); nothing is told of an answer. */
  onFailure(listener: (error: unknown) => void): void {
    if (this.#failure !== undefined) listener(this.#failure.error);
    else if (!this.#ended) this.#onFailure = listener;
  }

  then<A = void, B = never>(
    onFulfilled?: ((value: void) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): PromiseLike<A | B> {
    this.#awaited ??= this.#promised();
    return this.#awaited.promise.then(onFulfilled, onRejected);
  }

  /** The request is answered (or refused): its awaiters go on. */
  protected answered(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#awaited?.resolve();
  }

  /** The handler failed: the server answers it (500, or the connection cut), as it would a rejected promise. */
  protected failed(error: unknown): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#failure = { error };
    const listener = this.#onFailure;
    this.#onFailure = undefined;
    listener?.(error);
    this.#awaited?.reject(error);
  }

  #promised(): PromiseWithResolvers<void> {
    const awaited = Promise.withResolvers<void>();
    if (this.#failure !== undefined) awaited.reject(this.#failure.error);
    else if (this.#ended) awaited.resolve();
    return awaited;
  }
}

/**
 * path → method → handler. A key ending in `/*` (see `subtree`) serves every path below it, e.g.
 * `/v1/models/*` answers `/v1/models/meta-llama/Llama-3-8B`; no other key matches more than itself.
 */
export type EndpointTable = ReadonlyMap<string, ReadonlyMap<string, Handler>>;

/** The table key serving every path below `prefix` (which ends in `/`). */
export function subtree(prefix: string): string {
  return `${prefix}*`;
}

/** The methods serving `pathname`: its own entry, else the nearest subtree entry above it. */
export function lookupPath(table: EndpointTable, pathname: string): ReadonlyMap<string, Handler> | undefined {
  const exact = table.get(pathname);
  if (exact !== undefined) return exact;
  for (let slash = pathname.lastIndexOf('/'); slash >= 0; slash = slash === 0 ? -1 : pathname.lastIndexOf('/', slash - 1)) {
    const below = table.get(subtree(pathname.slice(0, slash + 1)));
    if (below !== undefined) return below;
  }
  return undefined;
}

export class TableBuilder {
  readonly #table = new Map<string, Map<string, Handler>>();

  add(method: string, path: string, handler: Handler): void {
    const byMethod = this.#table.get(path) ?? new Map<string, Handler>();
    byMethod.set(method, handler);
    this.#table.set(path, byMethod);
  }

  table(): EndpointTable {
    return this.#table;
  }
}

/** One table from several; a later table's path replaces an earlier one's (all of its methods). */
export function mergeTables(...tables: readonly EndpointTable[]): EndpointTable {
  const out = new Map<string, ReadonlyMap<string, Handler>>();
  for (const table of tables) for (const [path, byMethod] of table) out.set(path, byMethod);
  return out;
}

// ---- Requests being answered -----------------------------------------------------------------
//
// How many requests the gateway's listeners are answering right now, counted across all of them:
// the drain on shutdown waits for it to reach zero, and /admin/runtime shows it.

export class ActiveRequests {
  #count = 0;
  /** One listener for every response (it reads nothing of the one that closed): none is made per request. */
  readonly #closed = (): void => {
    this.#count -= 1;
  };

  /** Counts `res` until it closes (finished, or the client left). */
  track(res: ServerResponse): void {
    this.#count += 1;
    // `on`, not `once`: a response closes once, and `once` wraps each listener per request.
    res.on('close', this.#closed);
  }

  count(): number {
    return this.#count;
  }
}

// ---- The server ------------------------------------------------------------------------------

/** The endpoint table a server dispatches over, read at each request (its owner swaps `table` on reload). */
export interface EndpointsInForce {
  readonly table: EndpointTable;
}

export interface HttpServerOptions {
  readonly endpoints: EndpointsInForce;
  /** Counts the requests this server is answering (shared by all of a gateway's listeners). */
  readonly activeRequests: ActiveRequests;
  readonly onHandlerError: (error: unknown, req: IncomingMessage) => void;
  /** Bound on receiving one whole request (headers and body), against slow clients. */
  readonly requestTimeoutMs: number;
  readonly headersTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
  /** Largest request head accepted; larger ones get 431 from node:http. */
  readonly maxHeaderBytes: number;
}

export function createHttpServer(options: HttpServerOptions): Server {
  return createServer(
    {
      requestTimeout: options.requestTimeoutMs,
      headersTimeout: options.headersTimeoutMs,
      keepAliveTimeout: options.keepAliveTimeoutMs,
      maxHeaderSize: options.maxHeaderBytes,
      // node:http enforces the header and request timeouts only when it checks its connections;
      // its default of every 30 s would let a slow client hold a socket long past the limit.
      connectionsCheckingInterval: Math.max(100, Math.min(1_000, Math.floor(options.headersTimeoutMs / 4))),
    },
    (req, res) => {
      options.activeRequests.track(res);
      // dispatch never throws nor leaves a rejection unhandled: it answers every error (and
      // swallows one its answer throws).
      dispatch(options, req, res);
    },
  );
}

function dispatch(options: HttpServerOptions, req: IncomingMessage, res: ServerResponse): void {
  let handling: PromiseLike<void> | void;
  try {
    const method = req.method ?? 'GET';
    const target = parseRequestTarget(req.url);
    const problem = target.ok ? hostProblem(req.rawHeaders) : target.problem;
    if (problem !== undefined || !target.ok) {
      req.resume();
      sendError(res, badRequest(problem ?? 'malformed request'), { connection: 'close' });
      return;
    }
    const url = target.url;
    const byMethod = lookupPath(options.endpoints.table, url.pathname);
    if (byMethod === undefined) {
      req.resume();
      sendError(res, routeNotFound(method, url.pathname), {}, errorDialectFor(url.pathname));
      return;
    }
    const handler = byMethod.get(method) ?? (method === 'HEAD' ? byMethod.get('GET') : undefined);
    if (handler === undefined) {
      req.resume();
      sendError(
        res,
        methodNotAllowed(method, url.pathname),
        { allow: [...byMethod.keys()].join(', ') },
        errorDialectFor(url.pathname),
      );
      return;
    }
    handling = handler(req, res, url);
  } catch (error) {
    answerFailure(options, error, req, res);
    return;
  }
  // A handler that waits is answered alike when it fails: told by an Answering (no promise), or one
  // promise for a rejection's catch, no async frame around it.
  if (handling instanceof Answering) handling.onFailure((error) => answerFailure(options, error, req, res));
  else if (handling !== undefined) handling.then(undefined, (error: unknown) => answerFailure(options, error, req, res));
}

function answerFailure(options: HttpServerOptions, error: unknown, req: IncomingMessage, res: ServerResponse): void {
  try {
    answerInternalError(options, error, req, res);
  } catch {
    // Answering failed too (the log stream closed, say): nothing safer is left to do.
  }
}

/** Logs a failure no handler answered, then answers 500 (or cuts a response already under way). */
function answerInternalError(options: HttpServerOptions, error: unknown, req: IncomingMessage, res: ServerResponse): void {
  try {
    options.onHandlerError(error, req);
  } finally {
    // Answered even when logging it failed: the client is never left waiting.
    if (!res.headersSent) sendError(res, toGatewayError(error), {}, errorDialectFor(pathOf(req.url)));
    else res.destroy();
  }
}

export function listen(server: Server, host: string, port: number): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

export function urlOf(address: AddressInfo): string {
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}

/** Small JSON answer helper for the gateway's own endpoints. */
export function sendJson(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

/** The path of a request-target, for choosing the error dialect ('' when it does not parse). */
function pathOf(target: string | undefined): string {
  const parsed = parseRequestTarget(target);
  return parsed.ok ? parsed.url.pathname : '';
}
