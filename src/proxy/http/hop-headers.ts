// Header hygiene at both edges. Hop-by-hop headers (RFC 9110 §7.6.1, plus those named in
// `Connection`) are never forwarded; the client's credentials never reach a node.

import type { IncomingHttpHeaders } from 'node:http';

const HOP_BY_HOP: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'http2-settings',
]);

/**
 * Request headers that the gateway owns or recomputes, and a forwarding site's signature (it
 * authenticated the request here; a node has no use for it).
 */
const NOT_FORWARDED_UPSTREAM: ReadonlySet<string> = new Set([
  'host',
  'content-length',
  'authorization',
  'x-api-key',
  'expect',
  'accept-encoding',
  'signature',
  'signature-input',
  'x-switchyard-forwarded-by',
]);

/**
 * Response headers a node may not set for the gateway's origin: cookies, redirects, cache and
 * transport policy (HSTS, Alt-Svc) would bind the client to whatever sits behind the gateway.
 */
const NOT_PASSED_TO_CLIENT: ReadonlySet<string> = new Set([
  'set-cookie',
  'set-cookie2',
  'location',
  'content-location',
  'refresh',
  'alt-svc',
  'strict-transport-security',
]);

/** A multipart form's content-type (built once: a regular expression literal is a new object each time it is evaluated). */
const MULTIPART = /^\s*multipart\/form-data\s*;/i;

/** What a request without a Connection header, or with only keep-alive/close (nearly all), names. */
const NAMED_NONE: ReadonlySet<string> = new Set();

function namedInConnection(value: string | string[] | undefined): ReadonlySet<string> {
  // `keep-alive` (what nearly every client and node sends) names only a header dropped anyway.
  if (value === undefined || value === '' || value === 'keep-alive' || value === 'Keep-Alive') return NAMED_NONE;
  const named = new Set<string>();
  const text = Array.isArray(value) ? value.join(',') : (value ?? '');
  for (const token of text.split(',')) {
    const name = token.trim().toLowerCase();
    if (name) named.add(name);
  }
  return named;
}

export interface UpstreamHeaderInput {
  readonly client: IncomingHttpHeaders;
  readonly apiKey: string | undefined;
  readonly bodyBytes: number;
  readonly requestId: string;
  readonly clientAddress: string | undefined;
}

export function upstreamRequestHeaders(input: UpstreamHeaderInput): Record<string, string> {
  const dropped = namedInConnection(input.client.connection);
  const out: Record<string, string> = {};
  // for…in, not Object.entries: no array of pairs built per request (header records have no inherited keys).
  for (const name in input.client) {
    const value = input.client[name];
    if (value === undefined || HOP_BY_HOP.has(name) || NOT_FORWARDED_UPSTREAM.has(name) || dropped.has(name)) continue;
    out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  // A multipart body (the audio routes) keeps its content-type: the boundary is in it.
  const given = input.client['content-type'];
  out['content-type'] = typeof given === 'string' && MULTIPART.test(given) ? given : 'application/json';
  // The gateway reads answers to judge them (and the official openai SDK asks for gzip): plain bytes.
  out['accept-encoding'] = 'identity';
  out['content-length'] = String(input.bodyBytes);
  out['x-request-id'] = input.requestId;
  if (input.clientAddress !== undefined) {
    const prior = out['x-forwarded-for'];
    out['x-forwarded-for'] = prior ? `${prior}, ${input.clientAddress}` : input.clientAddress;
  }
  if (input.apiKey !== undefined) out.authorization = `Bearer ${input.apiKey}`;
  return out;
}

/** Upstream response headers minus hop-by-hop and origin-binding ones, ready for `res.writeHead`. */
export function clientResponseHeaders(
  upstream: Readonly<Record<string, string | string[] | undefined>>,
): Record<string, string | string[]> {
  const dropped = namedInConnection(upstream.connection);
  const out: Record<string, string | string[]> = {};
  for (const name in upstream) {
    const value = upstream[name];
    if (value === undefined) continue;
    const lower = name.toLowerCase();
    // CORS is the gateway's own policy for its origin ([server] cors_origins), never a node's.
    if (HOP_BY_HOP.has(lower) || NOT_PASSED_TO_CLIENT.has(lower) || dropped.has(lower) || lower.startsWith('access-control-'))
      continue;
    out[lower] = value;
  }
  return out;
}
