// A caller's class in every model's queue, and the name of the open caller: the scheduler's fair
// queue orders by them, routing and the request seam carry them, the tenants assign them and a
// forward from another site states them. They sit below all of those (the tenants' own table,
// tenants/tenants-config.ts, builds on them).

/** A tenant's priority class: its requests' place in every model's queue (docs/tenants.md). */
export const TENANT_PRIORITIES = ['interactive', 'standard', 'batch'] as const;
export type TenantPriority = (typeof TENANT_PRIORITIES)[number];

/** The tenant `[server] api_keys` stands for (and every request when no key is configured at all). */
export const DEFAULT_TENANT = 'default';
