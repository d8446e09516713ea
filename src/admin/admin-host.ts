// Pure: whether a request's Host is one the admin routes answer for (DNS rebinding). A page that
// rebinds its own name to this gateway's address reaches it with `Host: its.own.name`; it can
// never send an IP literal or a loopback name (those are not looked up in its DNS), nor a name the
// operator listed. So: IP literals, `localhost` and `*.localhost` (browsers resolve these to
// loopback themselves, RFC 6761), the listen addresses' names, the machine's own name, and
// `[admin] hosts` are answered; any other name is refused.

import { isIP } from 'node:net';

/** The names this gateway is reached by, besides IP literals and loopback names. */
export interface ExpectedHostNames {
  /** `[admin] hosts`. */
  readonly configured: readonly string[];
  /** `[server] listen` / `[admin] listen` hosts that are names (not IP literals). */
  readonly listen: readonly string[];
  /** The machine's own host name (os.hostname()), '' when unknown. */
  readonly machine: string;
}

export type HostVerdict = { readonly expected: true } | { readonly expected: false; readonly name: string };

/** The host part of a Host header value, lowercased, without port, brackets or a trailing dot. */
export function hostName(host: string): string {
  const lower = host.trim().toLowerCase();
  if (lower.startsWith('[')) {
    const close = lower.indexOf(']');
    return close < 0 ? lower : lower.slice(1, close);
  }
  const colon = lower.lastIndexOf(':');
  const name = colon < 0 ? lower : lower.slice(0, colon);
  return name.endsWith('.') ? name.slice(0, -1) : name;
}

/** Whether `name` (from hostName) is a loopback name a browser never looks up in DNS. */
export function isLoopbackName(name: string): boolean {
  return name === 'localhost' || name.endsWith('.localhost');
}

/**
 * `host`: the request's Host header; undefined = none (an HTTP/1.0 client: no browser sends a
 * request without one), which is answered.
 */
export function hostVerdict(host: string | undefined, names: ExpectedHostNames): HostVerdict {
  if (host === undefined || host === '') return { expected: true };
  const name = hostName(host);
  if (isIP(name) !== 0 || isLoopbackName(name)) return { expected: true };
  const same = (known: string): boolean => hostName(known) === name;
  if (names.configured.some(same) || names.listen.some(same) || (names.machine !== '' && same(names.machine)))
    return { expected: true };
  return { expected: false, name };
}
