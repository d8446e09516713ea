// The node:http server and its endpoint table. Handlers come from the composition root, so this
// file knows nothing of metrics or admin; it only dispatches and turns thrown errors into answers.

import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer } from '#src/core/node-http.ts';
import type { AddressInfo } from 'node:net';
import { badRequest, methodNotAllowed, routeNotFound } from '#src/core/errors.ts';
import { hostProblem, parseRequestTarget } from '#src/core/request-target.ts';
import type { ActiveRequests } from './active-requests.ts';
import { Answering, lookupPath, type EndpointTable } from './endpoint-table.ts';
import { sendError, toGatewayError } from './openai-error.ts';
import { errorDialectFor } from './error-dialect.ts';

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
