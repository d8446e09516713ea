// [cluster]: replicas of one site sharing slot leases through Redis/Valkey. Imported only by a
// dynamic import (cluster-feature.ts, in its start) when [cluster] is configured: it loads the client.

export { ClusterGate, type ClusterGateOptions, type GateOutcome } from './cluster-gate.ts';
export { clusterAdmit, type Admitter } from './cluster-admission.ts';
export { RedisStore, type RedisStoreOptions } from './redis-store.ts';
export {
  callTimeoutMs,
  fallbackPollMs,
  fallbackShare,
  renewEveryMs,
  type ClusterMode,
  type ClusterStatus,
} from './fallback-share.ts';
export type { ClusterStore, Pair, PairHeld, AcquireAnswer } from './store-port.ts';
export type {
  SharedAnswer,
  SharedLimits,
  SharedRejoin,
  SharedReserve,
  SharedSettle,
  StoreDays,
  TenantStore,
} from './tenant-store-port.ts';
export { LeaderLease, leaderTimings, type LeaderLeaseOptions, type LeaderStore } from './leader-lease.ts';
export type { PublishedPart, TenantPeek, UsageBoardStore } from './usage-board-port.ts';
export { claimOf, type SwitchClaimFields } from './switch-lua.ts';
export { SharedTenants, type SharedTenantsOptions } from './cluster-tenants.ts';
export { SiteTenants, type SiteTenantsOptions } from './site-tenants.ts';
export { SharedSwitches, remoteCounts, ticketOfClaim, type SharedSwitchesOptions, type SwitchStore } from './shared-switches.ts';
export { SharedSessions, type SessionStore } from './shared-sessions.ts';
