// Tenants: who a client is, what it may reach, its limits, its usage (docs/tenants.md).

export type { ModelQueueReport, ReplicaSeen, TenantLimitsReport, TenantReport, TenantsReport } from './tenant-report.ts';
export type { UsageRow, UsageStore } from './usage-rows.ts';
export type { LimitRefusal, TenantAdmission, TenantAsk, TenantDecision, TenantOutcome } from './admission-types.ts';
export { keyDigest, keyTag } from './key-tag.ts';
export { allowsEveryModel, allowsModel } from './scope.ts';
export { CALLER_TENANT, hasLimits, OPEN_TENANT, tenantOf, type Tenant } from './tenant.ts';
export { KeyDirectory, rotatingDirectory, sameTenants } from './key-directory.ts';
export {
  judgeAdmission,
  msToNextDay,
  rateFigures,
  utcDay,
  type LimitReason,
  type RateFigures,
  type TenantLimits,
} from './limits.ts';
export { TenantLedger, usedTokens, type LedgerTicket, type TenantFigures } from './ledger.ts';
export { limitedError, limitedHeaders, rateDuration, rateHeaders } from './rate-answer.ts';
export { ledgerAdmission, tenantReservation } from './ledger-admission.ts';
export { ledgerTenantAdmission, TENANT_ADMISSION, type TenantAdmissionPort } from './admission-port.ts';
export { decideAt, limitsShare, type TenantCounters } from './shared-verdict.ts';
export { tenantsReport } from './tenants-report.ts';
export {
  openUsageStore,
  oldestKeptDay,
  SqliteUsageStore,
  USAGE_RETENTION_DAYS,
  usageRowProblem,
  type SqliteUsageStoreOptions,
} from './usage-store.ts';
export {
  retryDelayMs,
  RETRY_FIRST_MS,
  USAGE_FLUSH_INTERVAL_MS,
  UsageFlusher,
  type UnsavedUsage,
  type UsageFlusherOptions,
} from './usage-flusher.ts';
export { storeDegrades, usageHealthPart, usageStoreReport, type UsageStoreReport } from './usage-health.ts';
export { FallbackTally, type TallyBatch, type TallyDay } from './fallback-tally.ts';
export { candidateAt, dayCandidates, type DayCandidates } from './store-day.ts';
export {
  replicaTenantsReport,
  replicaUsage,
  sharedRemaining,
  siteTenantsReport,
  type PublishedUsage,
  type ReplicaTenantUsage,
  type ReplicaUsage,
  type SharedCounters,
  type SiteInput,
} from './site-usage.ts';
export { tenantsOwnerSide, tenantsWorkerSide } from './tenants-crossing.ts';
export { TENANTS_CROSSING, type TenantOwnerMessage, type TenantWorkerMessage } from './tenant-messages.ts';
export { TenantDesk, type SharedTenantAdmit } from './tenant-desk.ts';
export { WorkerTenantAdmission } from './worker-admission.ts';
