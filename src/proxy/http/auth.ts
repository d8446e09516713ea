// Credentials at the gateway's own edge: the admin token on /admin/* and /metrics (client keys on
// /v1/* name tenants: tenants/key-directory.ts, whose keyTag() names a key in logs). Comparison is constant-time over fixed-length digests, and every configured key is
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

export function unauthorized(message: string): GatewayError {
  return new GatewayError('GW_UNAUTHORIZED', message, {
    status: 401,
    openaiType: 'authentication_error',
    openaiCode: 'invalid_api_key',
  });
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

export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  return address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.');
}
