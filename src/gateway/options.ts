// What a caller gives a gateway to start, and what a reload answers. They live here, beside the
// parts that read them, so the composition root (main.ts) depends on gateway/ and never the reverse.
// What the features take beside the config is theirs (features.ts, FeatureOptions).

import type { Logger } from 'pino';
import type { Clock } from '#src/core/clock.ts';
import type { ConfigProblem, GatewayConfig, LoadResult } from '#src/config/types.ts';
import type { FeatureOptions } from './features.ts';
import type { DnsLookup } from '#src/fleet/index.ts';

export type { MeshOptions } from './features.ts';

export interface GatewayOptions extends FeatureOptions {
  readonly config: GatewayConfig;
  readonly logger: Logger;
  readonly clock?: Clock;
  /** The selection policies' random source, uniform in [0, 1); absent = Math.random. */
  readonly random?: () => number;
  /** Re-reads the config for SIGHUP and POST /admin/reload; absent = reload unsupported. */
  readonly loadConfig?: () => Promise<LoadResult>;
  /** How DNS node sources look names up; absent = node:dns (src/fleet/dns-lookup.ts). */
  readonly dnsLookup?: DnsLookup;
}

export type ReloadOutcome = { readonly ok: true } | { readonly ok: false; readonly problems: readonly ConfigProblem[] };
