// The loaded form of `[[tenants]]` (tenants/tenants-table.ts produces it), and how it joins
// GatewayConfig (declaration merging: config/config-table.ts).

import { DEFAULT_TENANT, type TenantPriority } from '#src/core/tenant-class.ts';

declare module '#src/config/types.ts' {
  interface GatewayConfig {
    /**
     * `[[tenants]]`, then `default` holding `[server] api_keys` when there are any. Empty = no client
     * authentication: every request is the open `default` tenant's, without limits.
     */
    readonly tenants: readonly TenantSpec[];
  }
}

/** One `[[tenants]]` entry: who a client is, what it may reach, and how much. */
export interface TenantSpec {
  /** Names the tenant in /admin/tenants, metrics and logs (NODE_NAME_RULE characters). */
  readonly name: string;
  /** The tenant's client keys, resolved (literal, env: or file:). Never logged: keyTag() names one. */
  readonly keys: readonly string[];
  /** Model ids or patterns ("llama-*") the tenant may use; ["*"] = every model. */
  readonly models: readonly string[];
  /** Remote sites its requests may be forwarded to; undefined = every fresh one; [] = this site only. */
  readonly sites: readonly string[] | undefined;
  readonly priority: TenantPriority;
  /** Its share of its class's capacity against the class's other tenants (fair queueing). */
  readonly weight: number;
  /** Requests in flight at once (queued ones included); undefined = no limit. */
  readonly maxConcurrent: number | undefined;
  readonly requestsPerMinute: number | undefined;
  /** Prompt + completion tokens per minute (reserved at admission, settled from `usage`). */
  readonly tokensPerMinute: number | undefined;
  /** Prompt + completion tokens per UTC day: a budget that survives restarts with server.state_dir. */
  readonly tokensPerDay: number | undefined;
}

/** The `default` tenant holding `keys`: every model and site, standard priority, no limits. */
export function defaultTenantSpec(keys: readonly string[]): TenantSpec {
  return {
    name: DEFAULT_TENANT,
    keys,
    models: ['*'],
    sites: undefined,
    priority: 'standard',
    weight: 1,
    maxConcurrent: undefined,
    requestsPerMinute: undefined,
    tokensPerMinute: undefined,
    tokensPerDay: undefined,
  };
}
