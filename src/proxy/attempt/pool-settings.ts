// Pure: the upstream settings a node's connection pool is built from. A reload that changes one of
// them rebuilds the pools; any other upstream setting (held-answer bounds, ejection, total timeout)
// is read per request, so changing it leaves the pools and their open connections alone.

import type { UpstreamConfig } from '#src/config/types.ts';

export type PoolSettings = Pick<
  UpstreamConfig,
  'connectTimeoutMs' | 'headersTimeoutMs' | 'bodyIdleTimeoutMs' | 'maxConnections' | 'connectionWaitMs'
>;

export function samePoolSettings(a: PoolSettings, b: PoolSettings): boolean {
  return (
    a.connectTimeoutMs === b.connectTimeoutMs &&
    a.headersTimeoutMs === b.headersTimeoutMs &&
    a.bodyIdleTimeoutMs === b.bodyIdleTimeoutMs &&
    a.maxConnections === b.maxConnections &&
    a.connectionWaitMs === b.connectionWaitMs
  );
}
