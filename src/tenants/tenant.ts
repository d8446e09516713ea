// One tenant as the request path carries it: its spec, what every model's queue orders it by, and
// whether any limit applies (a tenant without limits is admitted without asking the ledger's owner).

import { defaultTenantSpec, type TenantSpec } from '#src/tenants/tenants-config.ts';
import { type TenantPriority } from '#src/core/tenant-class.ts';
import { partKey, type PartKey } from '#src/core/part-key.ts';

export interface Tenant {
  readonly spec: TenantSpec;
  /** RouteRequest.tenant: plain data, it crosses to the lease owner. */
  readonly queue: { readonly name: string; readonly priority: TenantPriority; readonly weight: number };
  /** Whether max_concurrent, requests_per_minute, tokens_per_minute or tokens_per_day is set. */
  readonly limited: boolean;
}

export function hasLimits(spec: TenantSpec): boolean {
  return (
    spec.maxConcurrent !== undefined ||
    spec.requestsPerMinute !== undefined ||
    spec.tokensPerMinute !== undefined ||
    spec.tokensPerDay !== undefined
  );
}

export function tenantOf(spec: TenantSpec): Tenant {
  return { spec, queue: { name: spec.name, priority: spec.priority, weight: spec.weight }, limited: hasLimits(spec) };
}

/** Every request's tenant when no key is configured at all: `default`, every model and site, no limits. */
export const OPEN_TENANT: Tenant = Object.freeze(tenantOf(defaultTenantSpec([])));

/**
 * A request caller's tenant (core/part-key.ts): the tenants' request half sets it on a tenant's
 * caller and answers it to federation (TenantCallers.tenantOf: its site scope, name and class).
 * Absent = no tenant (every site, no tenant header).
 */
export const CALLER_TENANT: PartKey<Pick<TenantSpec, 'name' | 'priority' | 'sites'>> = partKey('tenant');
