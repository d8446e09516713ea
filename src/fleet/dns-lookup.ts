// The DNS source's I/O: A and AAAA (with TTLs) for a name, or an SRV record and then its targets'
// addresses, through node:dns's Resolver (the named server, or the system's), each ask bounded by
// the source's timeout. An empty answer is a failure too: the last good set is kept.

import { Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { DnsNodeSourceSpec } from '#src/config/index.ts';
import type { DnsAnswer, DnsRecord } from './dns-records.ts';

/** At most this many SRV targets are resolved (a runaway record does not fan out without bound). */
const MAX_SRV_TARGETS = 256;

/** "no such name" / "no records of this type": an answer, not a failure, for one family. */
const EMPTY_CODES: ReadonlySet<string> = new Set(['ENODATA', 'ENOTFOUND']);

export async function lookupDns(spec: DnsNodeSourceSpec, signal: AbortSignal): Promise<DnsAnswer> {
  const resolver = new Resolver({ timeout: spec.timeoutMs, tries: 2 });
  // A stopped source's lookup ends at once (its queries cancelled), not at the resolver's timeout.
  const cancel = (): void => resolver.cancel();
  signal.addEventListener('abort', cancel, { once: true });
  if (spec.resolver !== undefined) {
    const { host, port } = spec.resolver;
    resolver.setServers([isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`]);
  }
  try {
    const records =
      spec.query.type === 'address'
        ? await addresses(resolver, spec.query.host, spec.query.port)
        : await srv(resolver, spec.query.record);
    if (records.length === 0) return { ok: false, reason: `${asked(spec)} answered no address` };
    return { ok: true, records };
  } catch (error) {
    return { ok: false, reason: `${asked(spec)} failed: ${describe(error)}` };
  } finally {
    signal.removeEventListener('abort', cancel);
    resolver.cancel();
  }
}

function asked(spec: DnsNodeSourceSpec): string {
  const what = spec.query.type === 'address' ? `A/AAAA ${spec.query.host}` : `SRV ${spec.query.record}`;
  return spec.resolver === undefined ? what : `${what} at ${spec.resolver.host}:${spec.resolver.port}`;
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' ? `${code} (${error.message})` : error.message;
  }
  return String(error);
}

/** Both families; one family's "no records" is fine, a real failure of either fails the look. */
async function addresses(resolver: Resolver, host: string, port: number, target?: string): Promise<DnsRecord[]> {
  const [v4, v6] = await Promise.allSettled([resolver.resolve4(host, { ttl: true }), resolver.resolve6(host, { ttl: true })]);
  const records: DnsRecord[] = [];
  for (const result of [v4, v6]) {
    if (result.status === 'rejected') {
      const code = (result.reason as { code?: unknown }).code;
      if (typeof code === 'string' && EMPTY_CODES.has(code)) continue;
      throw result.reason;
    }
    for (const r of result.value)
      records.push({ address: r.address, port, ttlMs: r.ttl * 1000, ...(target === undefined ? {} : { target }) });
  }
  return records;
}

async function srv(resolver: Resolver, record: string): Promise<DnsRecord[]> {
  let entries: Awaited<ReturnType<Resolver['resolveSrv']>>;
  try {
    entries = await resolver.resolveSrv(record);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && EMPTY_CODES.has(code)) return [];
    throw error;
  }
  const targets = entries.slice(0, MAX_SRV_TARGETS);
  const found = await Promise.all(
    targets.map((entry) =>
      isIP(entry.name) !== 0
        ? [{ address: entry.name, port: entry.port, ttlMs: undefined, target: entry.name }]
        : addresses(resolver, entry.name, entry.port, entry.name),
    ),
  );
  return found.flat();
}
