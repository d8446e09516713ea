// I/O for `switchyard init`: a URL whose host is a DNS name is resolved (A and AAAA, through the
// DNS node source's own lookup, bounded by --timeout) so that a name standing for several servers
// becomes a node source rather than one node. An address, `localhost`, or a name that does not
// resolve to several addresses is left as the URL it was.

import { isIP } from 'node:net';
import { NODE_SOURCE_DEFAULTS, type DnsNodeSourceSpec } from '#src/config/index.ts';
import { lookupDns, type DnsLookup } from '#src/fleet/index.ts';

export interface NameAddresses {
  readonly scheme: 'http' | 'https';
  readonly host: string;
  readonly port: number;
  /** Each address once, in the resolver's order; fewer than two = not a name of several servers. */
  readonly addresses: readonly string[];
}

export interface ResolveOptions {
  readonly timeoutMs: number;
  readonly resolver: { readonly host: string; readonly port: number } | undefined;
  readonly signal: AbortSignal;
  /** Tests may hand in another lookup; absent = node:dns. */
  readonly lookup?: DnsLookup;
}

/** The URL's name and its addresses; undefined when its host is an address or localhost. */
export async function resolveUrlName(url: string, options: ResolveOptions): Promise<NameAddresses | undefined> {
  const parsed = new URL(url);
  const host = parsed.hostname;
  if (isIP(host.replace(/^\[|\]$/g, '')) !== 0 || host === 'localhost' || host.endsWith('.localhost')) return undefined;
  const scheme = parsed.protocol === 'https:' ? 'https' : 'http';
  const port = parsed.port === '' ? (scheme === 'https' ? 443 : 80) : Number(parsed.port);
  const spec: DnsNodeSourceSpec = {
    kind: 'dns',
    name: 'init',
    query: { type: 'address', host, port },
    scheme,
    nodeKind: 'auto',
    group: undefined,
    apiKey: undefined,
    resolver: options.resolver,
    ...NODE_SOURCE_DEFAULTS,
    timeoutMs: options.timeoutMs,
  };
  const answer = await (options.lookup ?? lookupDns)(spec, options.signal);
  if (!answer.ok) return { scheme, host, port, addresses: [] };
  return { scheme, host, port, addresses: [...new Set(answer.records.map((r) => r.address))] };
}

/** The URL of one address of a name, as a node's. */
export function addressUrl(name: NameAddresses, address: string): string {
  return `${name.scheme}://${isIP(address) === 6 ? `[${address}]` : address}:${name.port}`;
}
