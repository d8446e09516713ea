// CORS for the public endpoints (`[server] cors_origins`): browser clients of an allowed origin get
// their preflight (`OPTIONS` with `Access-Control-Request-Method`) answered and
// `Access-Control-Allow-Origin` on every real answer; any other origin gets no Access-Control-*
// header at all, and with the setting off (the default) `OPTIONS` stays 405 as on any other route.
// The admin table is never wrapped. A reload that changes the origins rebuilds the table, so it applies at once.

import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { CorsOrigins } from '#src/config/index.ts';
import { methodNotAllowed } from '#src/core/errors.ts';
import type { TargetUrl } from '#src/core/request-target.ts';
import type { EndpointTable, Handler } from './server.ts';
import { sendError } from './openai-error.ts';

/** How long a browser may reuse a preflight answer (Chrome caps it at 7200 s). */
export const CORS_MAX_AGE_SECONDS = 600;

/** Request headers always allowed: the credentials clients send and the JSON body's type. */
export const CORS_ALLOWED_HEADERS: readonly string[] = ['authorization', 'content-type', 'x-api-key', 'x-request-id'];

/** Answer headers a browser script may read besides the safelisted ones. */
export const CORS_EXPOSED_HEADERS: readonly string[] = [
  'x-request-id',
  'x-switchyard-node',
  'x-switchyard-route',
  // How the gateway counted a count_tokens it answered itself (proxy/request/gateway-count.ts).
  'x-switchyard-count',
  'x-switchyard-count-node',
  'retry-after',
];

/** Bounds on the header names a preflight asks for (they are echoed back when well-formed). */
const MAX_REQUESTED_HEADERS = 64;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9a-z-]{1,128}$/;

/** Pure: the `Access-Control-Allow-Origin` value for a request's `Origin`; undefined = none is sent. */
export function allowedOrigin(origins: CorsOrigins, origin: string | undefined): string | undefined {
  if (origin === undefined || origin === '') return undefined;
  if (origins === '*') return '*';
  return origins.includes(origin) ? origin : undefined;
}

/**
 * Pure: the headers a real answer to `origin` carries. An origin that is not allowed gets no
 * Access-Control-* header; with a list of origins every answer still says `Vary: Origin`, so a
 * cache in front of the gateway never hands one origin the answer it kept for another.
 */
export function answerCorsHeaders(origins: CorsOrigins, origin: string | undefined): Record<string, string> {
  const allowed = allowedOrigin(origins, origin);
  if (allowed === undefined) return origins !== '*' && origins.length > 0 ? { vary: 'Origin' } : {};
  return {
    'access-control-allow-origin': allowed,
    'access-control-expose-headers': CORS_EXPOSED_HEADERS.join(', '),
    // A listed origin is echoed: caches must keep one answer per origin.
    ...(allowed === '*' ? {} : { vary: 'Origin' }),
  };
}

export interface PreflightAsk {
  readonly origin: string | undefined;
  /** `Access-Control-Request-Method`; undefined = a plain OPTIONS, not a preflight. */
  readonly method: string | undefined;
  /** `Access-Control-Request-Headers`, as sent. */
  readonly headers: string | undefined;
}

/** Pure: the headers of a preflight's 204 for a path serving `methods`; empty for an origin not allowed. */
export function preflightHeaders(origins: CorsOrigins, ask: PreflightAsk, methods: readonly string[]): Record<string, string> {
  const allowed = allowedOrigin(origins, ask.origin);
  if (allowed === undefined || ask.method === undefined) return {};
  const requested = (ask.headers ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => HEADER_NAME.test(name))
    .slice(0, MAX_REQUESTED_HEADERS);
  return {
    'access-control-allow-origin': allowed,
    'access-control-allow-methods': methods.join(', '),
    'access-control-allow-headers': [...new Set([...CORS_ALLOWED_HEADERS, ...requested])].join(', '),
    'access-control-max-age': String(CORS_MAX_AGE_SECONDS),
    vary:
      allowed === '*'
        ? 'Access-Control-Request-Headers'
        : 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers',
  };
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** Whether CORS is on at all (an empty list is off). */
function isOn(origins: CorsOrigins): boolean {
  return origins === '*' || origins.length > 0;
}

/** Pure: whether two settings allow the same origins (a reload that changes them rebuilds the table). */
export function sameCorsOrigins(a: CorsOrigins, b: CorsOrigins): boolean {
  if (a === '*' || b === '*') return a === b;
  return a.length === b.length && a.every((origin, index) => origin === b[index]);
}

/**
 * The table with CORS for `origins` (built again when a reload changes them): each handler first
 * sets the answer headers for the request's origin (so every answer it writes carries them, errors
 * and streams alike), and each path answers OPTIONS. Off (the default), the handlers are left as
 * they are: nothing runs per request; OPTIONS still answers 405 as it always has.
 */
export function withCors(table: EndpointTable, origins: CorsOrigins): EndpointTable {
  const on = isOn(origins);
  const out = new Map<string, ReadonlyMap<string, Handler>>();
  for (const [path, byMethod] of table) {
    const methods = [...new Set([...byMethod.keys(), ...(byMethod.has('GET') ? ['HEAD'] : []), 'OPTIONS'])];
    const wrapped = new Map<string, Handler>();
    for (const [method, handler] of byMethod) {
      wrapped.set(
        method,
        on
          ? (req, res, url) => {
              for (const [name, value] of Object.entries(answerCorsHeaders(origins, header(req.headers, 'origin'))))
                res.setHeader(name, value);
              return handler(req, res, url);
            }
          : handler,
      );
    }
    wrapped.set('OPTIONS', (req, res, url) => answerOptions(req, res, url, { origins, methods, others: [...byMethod.keys()] }));
    out.set(path, wrapped);
  }
  return out;
}

function answerOptions(
  req: IncomingMessage,
  res: ServerResponse,
  url: TargetUrl,
  c: { readonly origins: CorsOrigins; readonly methods: readonly string[]; readonly others: readonly string[] },
): void {
  req.resume();
  // Off: OPTIONS is what it was before CORS existed here, a method the path does not serve.
  if (!isOn(c.origins)) {
    sendError(res, methodNotAllowed('OPTIONS', url.pathname), { allow: c.others.join(', ') });
    return;
  }
  const ask = {
    origin: header(req.headers, 'origin'),
    method: header(req.headers, 'access-control-request-method'),
    headers: header(req.headers, 'access-control-request-headers'),
  };
  const cors = ask.method === undefined ? answerCorsHeaders(c.origins, ask.origin) : preflightHeaders(c.origins, ask, c.methods);
  res.writeHead(204, { allow: c.methods.join(', '), ...cors });
  res.end();
}
