// Pure: a DNS answer → the source's nodes (names stable across answers: `<source>-<address>-<port>`),
// and when to look next (the answer's TTL within the source's bounds; after a failure, sooner).

import { createHash } from 'node:crypto';
import { isIPv6 } from 'node:net';
import type { DnsNodeSourceSpec } from '#src/config/index.ts';
import type { SourcedNode } from './node-source.ts';
import type { DnsAnswer, DnsRecord } from './dns-records.ts';
import { byName } from './sourced-nodes.ts';

export type { DnsAnswer, DnsRecord } from './dns-records.ts';
export { sameNodes } from './sourced-nodes.ts';

const MAX_NODE_NAME = 64;

/** `<source>-<address>-<port>` (IPv6 colons kept, allowed in node names); a name over 64 characters hashes the address. */
export function dnsNodeName(source: string, address: string, port: number): string {
  const plain = `${source}-${address}-${port}`;
  if (plain.length <= MAX_NODE_NAME) return plain;
  return `${source}-${createHash('sha256').update(address).digest('hex').slice(0, 16)}-${port}`;
}

/** Each address once, in a stable order (by name), whatever order the resolver answered in. */
export function nodesFromRecords(spec: DnsNodeSourceSpec, records: readonly DnsRecord[]): SourcedNode[] {
  const found = new Map<string, SourcedNode>();
  for (const record of records) {
    const name = dnsNodeName(spec.name, record.address, record.port);
    if (found.has(name)) continue;
    const host = isIPv6(record.address) ? `[${record.address}]` : record.address;
    found.set(
      name,
      Object.freeze({
        name,
        url: `${spec.scheme}://${host}:${record.port}`,
        kind: spec.nodeKind,
        group: spec.group,
        labels: Object.freeze({
          source: spec.name,
          address: record.address,
          port: String(record.port),
          ...(record.target === undefined ? {} : { target: record.target }),
        }),
      }),
    );
  }
  return [...found.values()].sort(byName);
}

/**
 * When to look next: the interval, sooner when a record's TTL is shorter, always within [min_ttl, max_ttl];
 * after `failures` failed looks in a row, min_ttl doubled per failure, at most the interval.
 */
export function nextLookMs(spec: DnsNodeSourceSpec, answer: DnsAnswer, failures: number): number {
  if (!answer.ok || answer.records.length === 0)
    return Math.min(Math.max(spec.intervalMs, spec.minTtlMs), spec.minTtlMs * 2 ** Math.min(Math.max(failures - 1, 0), 20));
  const ttls = answer.records.flatMap((r) => (r.ttlMs === undefined ? [] : [r.ttlMs]));
  return Math.min(spec.maxTtlMs, Math.max(spec.minTtlMs, Math.min(spec.intervalMs, ...ttls)));
}
