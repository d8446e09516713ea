// The CLI's HTTP client for its few admin reads (`status`, `models`): one node:http request per
// call on its own connection (closed after the answer), no pool. undici (the gateway's client) takes ~40 ms and ~13 MB to import, more than such a
// command spends on the rest of its run (issue 28: a command starts in ≤ 150 ms). Bounds are the
// caller's (core/bounded-text.ts: the whole exchange under its deadline signal, the bytes it reads).

import { request } from '#src/core/node-http.ts';
import type { RequestedBody, TextRequester } from '#src/core/bounded-text.ts';

/** A connection not made within `connectTimeoutMs` fails the request (the caller's deadline bounds the rest). */
export function httpRequester(connectTimeoutMs: number): TextRequester {
  return {
    request: (options) =>
      new Promise((resolve, reject) => {
        const target = new URL(options.path, options.origin);
        if (target.protocol !== 'http:') {
          reject(new Error(`only http:// gateways are read by this command (got ${target.protocol}//)`));
          return;
        }
        const headers: Record<string, string> = { ...options.headers };
        if (options.body !== undefined) headers['content-length'] = String(Buffer.byteLength(options.body));
        const req = request(target, { method: options.method, headers, signal: options.signal, timeout: connectTimeoutMs, agent: false });
        req.once('socket', (socket) => {
          // `timeout` is an idle timeout on the socket; once connected, the caller's deadline rules.
          socket.once('connect', () => req.setTimeout(0));
        });
        req.once('timeout', () => req.destroy(new Error(`connect timed out after ${connectTimeoutMs}ms`)));
        req.once('error', reject);
        req.once('response', (response) => {
          const body: RequestedBody = response;
          resolve({ statusCode: response.statusCode ?? 0, body });
        });
        req.end(options.body);
      }),
  };
}
