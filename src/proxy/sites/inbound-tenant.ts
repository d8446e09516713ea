// Pure: which tenant a forwarded request is admitted as (docs/tenants.md, "Peer sites as tenants").
// The sending site's own `[[mesh.sites]] tenant` decides — its limits, model scope, priority and
// weight — never the tenant the sender states: that one is recorded for accounting, and can only
// lower the class (the receiver caps it: the lower of the two). A site with no tenant keeps the
// behaviour from before tenants: no tenant limits, queued as the open `default` tenant (standard,
// weight 1), the stated class again able only to lower it.

import { DEFAULT_TENANT, TENANT_PRIORITIES, type TenantPriority } from '#src/core/tenant-class.ts';
import type { GatewayConfig } from '#src/config/index.ts';
import type { MeshSitePin } from '#src/mesh/config/mesh-config.ts';
import type { ForwardTenantClaim } from '#src/mesh/forwarding/index.ts';
import type { QueueTenant } from '#src/routing/index.ts';

/** A tenant as the config lists it (the tenants' table joins GatewayConfig: tenants/tenants-config.ts); federation imports no tenant code. */
export type TenantSpec = GatewayConfig['tenants'][number];

export interface InboundTenant {
  /** The tenant whose limits and scopes apply; undefined = the site has none (no tenant limits). */
  readonly tenant: TenantSpec | undefined;
  /** The request's place in every model's queue: the tenant's name and weight, the capped class. */
  readonly queue: QueueTenant;
}

/** A tenant's place in the queues as configured (its class, before any cap). */
export function queueTenantOf(tenant: Pick<TenantSpec, 'name' | 'priority' | 'weight'>): QueueTenant {
  return { name: tenant.name, priority: tenant.priority, weight: tenant.weight };
}

/** The lower of two classes (batch < standard < interactive); `stated` absent = `own`. */
export function cappedClass(own: TenantPriority, stated: TenantPriority | undefined): TenantPriority {
  if (stated === undefined) return own;
  return TENANT_PRIORITIES.indexOf(stated) > TENANT_PRIORITIES.indexOf(own) ? stated : own;
}

/**
 * `pin` is the sending site's `[[mesh.sites]]` entry (its signature verified), `claimed` what its
 * tenant header states, `tenants` the config's. Throws when the pin names a tenant `tenants` lacks:
 * the config's validation refuses that, so it is a bug, and admitting the site unlimited would be
 * the wrong way to fail.
 */
export function inboundTenant(
  pin: Pick<MeshSitePin, 'id' | 'tenant'>,
  claimed: ForwardTenantClaim | undefined,
  tenants: readonly TenantSpec[],
): InboundTenant {
  if (pin.tenant === undefined)
    return {
      tenant: undefined,
      queue: { name: DEFAULT_TENANT, priority: cappedClass('standard', claimed?.priority), weight: 1 },
    };
  const tenant = tenants.find((t) => t.name === pin.tenant);
  if (tenant === undefined) throw new Error(`[[mesh.sites]] "${pin.id}" names tenant "${pin.tenant}", which is not configured`);
  return { tenant, queue: { ...queueTenantOf(tenant), priority: cappedClass(tenant.priority, claimed?.priority) } };
}
