// Tenants: who a client is, what it may reach, its limits, its usage (docs/tenants.md).

export type { ModelQueueReport, TenantLimitsReport, TenantReport, TenantsReport } from './tenant-report.ts';
export type { UsageRow, UsageStore } from './usage-rows.ts';
export { openUsageStore, oldestKeptDay, SqliteUsageStore, USAGE_RETENTION_DAYS, usageRowProblem, type SqliteUsageStoreOptions } from './usage-store.ts';
export { USAGE_FLUSH_INTERVAL_MS, UsageFlusher, type UsageFlusherOptions } from './usage-flusher.ts';
