// The paths the owner answers (admin views and commands, /metrics, the dashboard and its live feed)
// reach a worker like any request, since all workers share the one listener: the worker relays them
// to the owner's loopback relay listener and streams the answer back. The relay says whom it relays
// for (the client's address) with a per-gateway secret, so the owner's admin checks judge the real
// client and not the relay's own loopback connection. Proxy headers from the client pass unchanged.

import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { Agent, request } from '#src/core/node-http.ts';
import { timingSafeEqual } from 'node:crypto';
import { GatewayError } from '#src/core/errors.ts';
import { sendError, type EndpointTable, type Handler } from '#src/proxy/index.ts';
import type { RelayTarget } from './protocol.ts';

const SECRET_HEADER = 'x-switchyard-relay';
const PEER_HEADER = 'x-switchyard-relay-peer';
const HOP_BY_HOP: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'upgrade',
  'transfer-encoding',
  SECRET_HEADER,
  PEER_HEADER,
]);

function endToEnd(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const out: IncomingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) if (!HOP_BY_HOP.has(name) && value !== undefined) out[name] = value;
  return out;
}

export interface Relay {
  readonly handler: Handler;
  close(): void;
}

/** Worker side: the relayed paths (with their methods), each answered by the relay; empty without one. */
export function relayedTable(
  relay: Relay | undefined,
  relayed: readonly (readonly [path: string, methods: readonly string[]])[],
): EndpointTable {
  return new Map(
    relay === undefined
      ? []
      : relayed.map(([path, methods]) => [path, new Map(methods.map((method) => [method, relay.handler]))]),
  );
}

/** Worker side: one handler that relays any request to the owner. `headersTimeoutMs` bounds the wait for its answer's head. */
export function relayTo(target: RelayTarget, headersTimeoutMs: number): Relay {
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const base = new URL(target.url);
  const handler: Handler = (req, res) =>
    new Promise<void>((resolve) => {
      const headers = { ...endToEnd(req.headers), [SECRET_HEADER]: target.secret, [PEER_HEADER]: req.socket.remoteAddress ?? '' };
      const outgoing = request({ host: base.hostname, port: base.port, method: req.method, path: req.url, headers, agent });
      const timer = setTimeout(
        () => outgoing.destroy(new Error(`the owner did not answer within ${headersTimeoutMs}ms`)),
        headersTimeoutMs,
      );
      const fail = (error: Error): void => {
        clearTimeout(timer);
        if (!res.headersSent) sendError(res, relayFailed(error));
        else res.destroy();
        resolve();
      };
      outgoing.once('error', fail);
      outgoing.once('response', (answer: IncomingMessage) => {
        clearTimeout(timer);
        outgoing.off('error', fail);
        // The dashboard feed streams for as long as the client stays: no bound on the body, by design.
        res.writeHead(answer.statusCode ?? 502, endToEnd(answer.headers));
        answer.pipe(res);
        answer.once('error', () => res.destroy());
        res.once('close', () => {
          answer.destroy();
          resolve();
        });
      });
      res.once('close', () => {
        if (!res.writableFinished) outgoing.destroy();
      });
      req.pipe(outgoing);
    });
  return { handler, close: () => agent.destroy() };
}

function relayFailed(error: Error): GatewayError {
  return new GatewayError('GW_UPSTREAM_UNREACHABLE', `the gateway's owner thread did not answer this request: ${error.message}`, {
    status: 502,
    openaiType: 'server_error',
  });
}

/**
 * Owner side: `table` as the relay listener serves it. A request without this gateway's secret is
 * refused; one with it is handled as from the client the worker named.
 */
export function acceptRelayed(table: EndpointTable, secret: string): EndpointTable {
  const expected = Buffer.from(secret);
  const guard =
    (handler: Handler): Handler =>
    (req, res, url) => {
      const presented = Buffer.from(String(req.headers[SECRET_HEADER] ?? ''));
      if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) {
        req.resume();
        sendError(
          res,
          new GatewayError('GW_UNAUTHORIZED', 'this listener takes only requests relayed by the gateway’s own workers', {
            status: 403,
            openaiType: 'authentication_error',
            openaiCode: 'forbidden',
          }),
        );
        return;
      }
      const peer = String(req.headers[PEER_HEADER] ?? '');
      // Admin checks read the connection's address; on a relayed request that is the relay's own
      // loopback socket, so it is replaced (per request: keep-alive reuses the socket) by the client's.
      Object.defineProperty(req.socket, 'remoteAddress', { value: peer === '' ? undefined : peer, configurable: true });
      for (const name of [SECRET_HEADER, PEER_HEADER]) delete req.headers[name];
      return handler(req, res, url);
    };
  return new Map(
    [...table].map(([path, byMethod]) => [path, new Map([...byMethod].map(([method, handler]) => [method, guard(handler)]))]),
  );
}
