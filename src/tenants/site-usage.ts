// Pure: GET /admin/tenants for the whole site with [cluster]. Each replica publishes its own part
// (`replicaUsage`: per tenant its in-flight, queued, this minute's and today's counts, and its
// models' queues) to the store; a replica answering the report sums its own fresh part with the
// others' last published parts (`siteTenantsReport`). A part older than lease_ttl is a replica
// that stopped publishing (dead, or cut from the store): it is named as expired, its in-flight,
// queued and minute counts are left out (they are gone with it), its counts of today are kept
// (that usage happened, and the shared day budget counts it too). A part of another UTC day adds
// nothing. `remaining` is the shared counters' word when the store gave it, else this replica's.

import type { ModelQueueReport, ReplicaSeen, TenantReport, TenantsReport } from './tenant-report.ts';
import { usedAt, type Meter, type TenantLimits } from './limits.ts';

/** One tenant's counts at one replica. */
export interface ReplicaTenantUsage {
  readonly inFlight: number;
  readonly queued: number;
  readonly minute: TenantReport['minute'];
  readonly today: TenantReport['today'];
}

/** What a replica publishes: its counts of `day` (UTC), by tenant, and its models' queues. */
export interface ReplicaUsage {
  readonly day: string;
  readonly tenants: Readonly<Record<string, ReplicaTenantUsage>>;
  readonly queues: Readonly<Record<string, ModelQueueReport>>;
}

/** Another replica's part as read from the store, with its age by the store's clock. */
export interface PublishedUsage {
  readonly replica: string;
  readonly ageMs: number;
  /** undefined: the entry could not be read (written by another version); the replica is still named. */
  readonly usage: ReplicaUsage | undefined;
}

/** A limited tenant's shared counters as the store holds them now. */
export interface SharedCounters {
  readonly inFlight: number;
  readonly requests: Meter | undefined;
  readonly tokens: Meter | undefined;
  /** The UTC day's tokens, used plus reserved. */
  readonly dayTokens: number;
  readonly nowMs: number;
}

/** This replica's part of its local report. A tenant with nothing to count is left out (the entry stays small). */
export function replicaUsage(local: TenantsReport, day: string): ReplicaUsage {
  const tenants: Record<string, ReplicaTenantUsage> = {};
  for (const t of local.tenants) {
    if (t.inFlight === 0 && t.queued === 0 && t.today.requests === 0 && t.minute.requests === 0 && t.minute.tokens === 0)
      continue;
    tenants[t.name] = { inFlight: t.inFlight, queued: t.queued, minute: t.minute, today: t.today };
  }
  return { day, tenants, queues: local.queues };
}

/** What remains of each limit by the shared counters (null = no such limit), as the ledger reports its own. */
export function sharedRemaining(limits: TenantLimits, counters: SharedCounters): TenantReport['remaining'] {
  const left = (limit: number | undefined, meter: Meter | undefined): number | null =>
    limit === undefined
      ? null
      : Math.max(0, Math.floor(limit - (meter === undefined ? 0 : usedAt(meter, limit, counters.nowMs))));
  return {
    requests: left(limits.requestsPerMinute, counters.requests),
    tokens: left(limits.tokensPerMinute, counters.tokens),
    budget: limits.tokensPerDay === undefined ? null : Math.max(0, limits.tokensPerDay - counters.dayTokens),
  };
}

export interface SiteInput {
  /** This replica's name and its local report now. */
  readonly replica: string;
  readonly local: TenantsReport;
  readonly day: string;
  /** Every part in the store (this replica's own is skipped: the local report is fresher). */
  readonly published: readonly PublishedUsage[];
  readonly leaseTtlMs: number;
  /** The shared counters' `remaining` of a limited tenant; undefined = this replica's own figure. */
  readonly remaining: (tenant: string) => TenantReport['remaining'] | undefined;
}

/** The site's report: every live replica's counts summed, every replica named, `scope: "site"`. */
export function siteTenantsReport(input: SiteInput): TenantsReport {
  const own = replicaUsage(input.local, input.day);
  const parts: { name: string; usage: ReplicaUsage | undefined; live: boolean; ageMs: number }[] = [
    { name: input.replica, usage: own, live: true, ageMs: 0 },
  ];
  for (const p of [...input.published].sort((a, b) => a.replica.localeCompare(b.replica))) {
    if (p.replica === input.replica) continue;
    parts.push({ name: p.replica, usage: p.usage, live: p.ageMs <= input.leaseTtlMs, ageMs: Math.max(0, p.ageMs) });
  }
  const live = parts.filter((p) => p.live);
  // The others' parts: this replica's own counts are the local report's (fresher than its entry).
  const othersLive = live.slice(1).map((p) => p.usage);
  const othersToday = parts
    .slice(1)
    .filter((p) => p.usage?.day === input.day)
    .map((p) => p.usage);
  const tenants = input.local.tenants.map((t): TenantReport => {
    const sum = (from: readonly (ReplicaUsage | undefined)[], read: (u: ReplicaTenantUsage) => number): number =>
      from.reduce((n, u) => n + read(u?.tenants[t.name] ?? ZERO), 0);
    return {
      ...t,
      inFlight: t.inFlight + sum(othersLive, (u) => u.inFlight),
      queued: t.queued + sum(othersLive, (u) => u.queued),
      minute: {
        requests: t.minute.requests + sum(othersLive, (u) => u.minute.requests),
        tokens: t.minute.tokens + sum(othersLive, (u) => u.minute.tokens),
      },
      today: {
        requests: t.today.requests + sum(othersToday, (u) => u.today.requests),
        promptTokens: t.today.promptTokens + sum(othersToday, (u) => u.today.promptTokens),
        completionTokens: t.today.completionTokens + sum(othersToday, (u) => u.today.completionTokens),
      },
      remaining: input.remaining(t.name) ?? t.remaining,
    };
  });
  const replicas: Record<string, ReplicaSeen> = {};
  for (const p of parts) {
    const counted = Object.values(p.usage?.tenants ?? {});
    replicas[p.name] = {
      live: p.live,
      ...(p.live ? {} : { expired: true }),
      ageMs: Math.round(p.ageMs),
      inFlight: p.live ? counted.reduce((n, u) => n + u.inFlight, 0) : 0,
      queued: p.live ? counted.reduce((n, u) => n + u.queued, 0) : 0,
      requestsToday: p.usage?.day === input.day ? counted.reduce((n, u) => n + u.today.requests, 0) : 0,
    };
  }
  return { tenants, queues: sumQueues(live.map((p) => p.usage?.queues ?? {})), scope: 'site', replicas };
}

/** This replica's own report when the site's cannot be had: named as the replica's, with why. */
export function replicaTenantsReport(local: TenantsReport, reason: string): TenantsReport {
  return { ...local, scope: 'replica', store: 'unreachable', storeReason: reason };
}

const ZERO: ReplicaTenantUsage = {
  inFlight: 0,
  queued: 0,
  minute: { requests: 0, tokens: 0 },
  today: { requests: 0, promptTokens: 0, completionTokens: 0 },
};

function sumQueues(all: readonly Readonly<Record<string, ModelQueueReport>>[]): Record<string, ModelQueueReport> {
  const out: Record<
    string,
    { byClass: { interactive: number; standard: number; batch: number }; byTenant: Record<string, number> }
  > = {};
  for (const queues of all) {
    for (const [model, q] of Object.entries(queues)) {
      const into = (out[model] ??= { byClass: { interactive: 0, standard: 0, batch: 0 }, byTenant: {} });
      into.byClass.interactive += q.byClass.interactive;
      into.byClass.standard += q.byClass.standard;
      into.byClass.batch += q.byClass.batch;
      for (const [tenant, n] of Object.entries(q.byTenant)) into.byTenant[tenant] = (into.byTenant[tenant] ?? 0) + n;
    }
  }
  return out;
}
