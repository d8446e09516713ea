// What a DNS lookup answers, and the lookup's shape (dns-lookup.ts is the real one; tests may hand in another).

import type { DnsNodeSourceSpec } from '#src/config/index.ts';

/** One address a lookup found, with the port to reach it at and its TTL (undefined: the record carries none). */
export interface DnsRecord {
  readonly address: string;
  readonly port: number;
  readonly ttlMs: number | undefined;
  /** The SRV target it came from; absent for A/AAAA. */
  readonly target?: string;
}

export type DnsAnswer =
  { readonly ok: true; readonly records: readonly DnsRecord[] } | { readonly ok: false; readonly reason: string };

/** How a DNS source asks; `signal` aborts the lookup (the source stopped). */
export type DnsLookup = (spec: DnsNodeSourceSpec, signal: AbortSignal) => Promise<DnsAnswer>;
