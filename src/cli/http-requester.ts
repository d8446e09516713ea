// The CLI's HTTP client for its few admin reads (`status`, `models`): one node:http request per
// call on its own connection (closed after the answer), no pool. undici (the gateway's client) takes ~40 ms and ~13 MB to import, more than such a
// command spends on the rest of its run (issue 28: a command starts in ≤ 150 ms). It takes the
// exchange the way undici's dispatch does (core/bounded-exchange.ts: a handler told of the head,
// each chunk and the end), so the bounds stay the caller's (core/bounded-text.ts: the whole exchange
// under its deadline signal, the bytes it reads).

import { request } from '#src/core/node-http.ts';
import type { ExchangeController, ExchangeDispatcher } from '#src/core/bounded-exchange.ts';

/** A connection not made within `connectTimeoutMs` fails the request (the caller's deadline bounds the rest). */
export function httpRequester(connectTimeoutMs: number): ExchangeDispatcher {
  return {
    dispatch(options, handler) {
      const target = new URL(options.path, options.origin);
      if (target.protocol !== 'http:') {
        handler.onResponseError(
          undefined,
          new Error(`only http:// gateways are read by this command (got ${target.protocol}//)`),
        );
        return true;
      }
      const headers: Record<string, string> = { ...options.headers };
      if (options.body !== undefined) headers['content-length'] = String(Buffer.byteLength(options.body));
      const req = request(target, { method: options.method, headers, timeout: connectTimeoutMs, agent: false });
      let over = false;
      const fail = (error: Error): void => {
        if (over) return;
        over = true;
        handler.onResponseError(controller, error);
      };
      const controller: ExchangeController = {
        abort(reason) {
          req.destroy(reason);
          fail(reason);
        },
      };
      req.once('socket', (socket) => {
        // `timeout` is an idle timeout on the socket; once connected, the caller's deadline rules.
        socket.once('connect', () => req.setTimeout(0));
      });
      req.once('timeout', () => req.destroy(new Error(`connect timed out after ${connectTimeoutMs}ms`)));
      req.on('error', fail);
      req.once('response', (response) => {
        response.on('error', fail);
        response.once('close', () => {
          if (!response.complete) fail(new Error('the answer broke off'));
        });
        response.on('data', (chunk: Buffer) => {
          if (!over) handler.onResponseData(controller, chunk);
        });
        response.once('end', () => {
          if (over) return;
          over = true;
          handler.onResponseEnd(controller, {});
        });
        if (!over) handler.onResponseStart(controller, response.statusCode ?? 0, response.headers, response.statusMessage);
      });
      handler.onRequestStart(controller, undefined);
      if (!over) req.end(options.body);
      return true;
    },
  };
}
