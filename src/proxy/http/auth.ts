// Credentials at the gateway's own edge: client API keys on /v1/*, the admin token on /admin/* and
// /metrics. Comparison is constant-time over fixed-length digests, and every configured key is
// compared (no early exit), so timing tells nothing about which key or how much of it matched.

import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { GatewayError } from '#src/core/errors.ts';

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

export type KeyCheck = (presented: string | undefined) => boolean;

export function keyChecker(keys: readonly string[]): KeyCheck {
  const digests = keys.map(digest);
  return (presented) => {
    if (presented === undefined) return false;
    const candidate = digest(presented);
    let matched = false;
    for (const known of digests) matched = timingSafeEqual(known, candidate) || matched;
    return matched;
  };
}

/** A check against keys re-read on every call, so a reload can rotate them; rebuilt only when they change. */
export function rotatingKeyCheck(keys: () => readonly string[]): KeyCheck {
  let last: { keys: readonly string[]; check: KeyCheck } | undefined;
  return (presented) => {
    const current = keys();
    if (last?.keys !== current) last = { keys: current, check: keyChecker(current) };
    return last.check(presented);
  };
}

/**
 * STAND-IN until the tenant identity of issue 23 (key → TenantSpec, h23a) is merged — the lead
 * replaces it with that: the tenant holding the presented key, compared as keyChecker does (every
 * key of every tenant, no early exit); rebuilt when the tenants change (a reload).
 */
export function tenantByKey<T extends { readonly keys: readonly string[] }>(tenants: () => readonly T[]): (presented: string | undefined) => T | undefined {
  let last: { tenants: readonly T[]; checks: readonly (readonly [T, KeyCheck])[] } | undefined;
  return (presented) => {
    const current = tenants();
    if (last?.tenants !== current) last = { tenants: current, checks: current.map((tenant) => [tenant, keyChecker(tenant.keys)] as const) };
    let found: T | undefined;
    for (const [tenant, check] of last.checks) if (check(presented) && found === undefined) found = tenant;
    return found;
  };
}

export function unauthorized(message: string): GatewayError {
  return new GatewayError('GW_UNAUTHORIZED', message, { status: 401, openaiType: 'authentication_error', openaiCode: 'invalid_api_key' });
}

/** The credential a client presented: `Authorization: Bearer X`, or `x-api-key: X`. */
export function presentedKey(headers: IncomingHttpHeaders): string | undefined {
  const authorization = headers.authorization;
  if (typeof authorization === 'string') {
    const match = /^Bearer\s+(.+)$/i.exec(authorization.trim());
    if (match?.[1] !== undefined) return match[1].trim();
  }
  const apiKey = headers['x-api-key'];
  return typeof apiKey === 'string' && apiKey !== '' ? apiKey : undefined;
}

/** A short, non-reversible tag for logs: which key was used, never the key. */
export function keyTag(key: string): string {
  return digest(key).subarray(0, 4).toString('hex');
}

export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  return address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.');
}
