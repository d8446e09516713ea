// `[cluster]`, the cluster's config table (config/config-table.ts): the store URL (redis:// or
// rediss://, a host, an optional port and DB number, no credentials in it), the password through
// `env:`, the replica's name, lease_ttl. Imports zod and config/ only (not the store client).
import { z } from 'zod';
import { resolveApiKey, type EnvVars } from '#src/config/api-key.ts';
import type { ConfigTable } from '#src/config/config-table.ts';
import { formatDurationMs } from '#src/config/duration.ts';
import { invalid, valid, type ParseResult } from '#src/config/parse-result.ts';
import { durationMs, nodeName, parsedBy, table } from '#src/config/schema-parts.ts';
import type { ClusterConfig } from './cluster-config.ts';

export const CLUSTER_DEFAULTS = Object.freeze({ leaseTtlMs: 10_000, prefix: 'switchyard:' });

export function parseStoreUrl(text: string): ParseResult<string> {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return invalid('must be a URL like "redis://127.0.0.1:6379/0" (or rediss:// for TLS)');
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:')
    return invalid(`must start with redis:// or rediss:// (got "${url.protocol}//")`);
  if (url.hostname === '') return invalid('must name the store\'s host, like "redis://127.0.0.1:6379/0"');
  if (url.password !== '' || url.username !== '')
    return invalid('must not carry credentials: give them as password = "env:NAME"');
  const db = url.pathname.replace(/^\//, '');
  if (db !== '' && !/^\d{1,2}$/.test(db)) return invalid(`the database after the port must be a number like /0 (got "/${db}")`);
  if (url.search !== '' || url.hash !== '') return invalid('must not have a query or fragment');
  return valid(text);
}

const leaseTtl = durationMs.pipe(
  z
    .number()
    .min(1000, { error: 'must be at least 1s (renewals go out three times per lease_ttl)' })
    .max(300_000, { error: 'must be at most 5m' }),
);

export function clusterSchema(env: EnvVars): z.ZodType<ClusterConfig> {
  return table({
    store: z.string({ error: 'must be a string like "redis://127.0.0.1:6379/0"' }).pipe(parsedBy(parseStoreUrl)),
    password: z
      .string()
      .pipe(parsedBy((value: string) => resolveApiKey(value, env)))
      .optional(),
    replica: nodeName.optional(),
    lease_ttl: leaseTtl.default(CLUSTER_DEFAULTS.leaseTtlMs),
    prefix: z
      .string()
      .regex(/^[A-Za-z0-9._:-]{1,64}$/, { error: 'must be 1 to 64 characters: letters, digits, . _ : -' })
      .default(CLUSTER_DEFAULTS.prefix),
  }).transform((cluster) => ({
    store: cluster.store,
    password: cluster.password,
    replica: cluster.replica,
    leaseTtlMs: cluster.lease_ttl,
    prefix: cluster.prefix,
  }));
}

export const clusterTable = Object.freeze<ConfigTable<'cluster'>>({
  name: 'cluster',
  schema: ({ env }) => clusterSchema(env).optional(),
  summary: (config) => [describeCluster(config.cluster)],
  // The store connection and the replica's name are set up once, at start.
  restartOnly: (previous, next) => (JSON.stringify(previous.cluster) === JSON.stringify(next.cluster) ? [] : ['cluster']),
});

function describeCluster(cluster: ClusterConfig | undefined): string {
  if (cluster === undefined) return 'cluster: none (one replica: its limits are this process’s own)';
  const replica = cluster.replica === undefined ? 'replica named by host and pid' : `replica ${cluster.replica}`;
  return (
    `cluster: store ${cluster.store} (password ${cluster.password === undefined ? 'not set' : 'set'}), ${replica}, ` +
    `lease ${formatDurationMs(cluster.leaseTtlMs)}, prefix ${cluster.prefix}`
  );
}
