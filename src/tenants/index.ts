// Tenants: who a client is, what it may reach, its limits, its usage (docs/tenants.md).

export type { ModelQueueReport, TenantLimitsReport, TenantReport, TenantsReport } from './tenant-report.ts';
export type { UsageRow, UsageStore } from './usage-rows.ts';
