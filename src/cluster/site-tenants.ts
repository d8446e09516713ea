// [cluster]: GET /admin/tenants for the whole site. This replica publishes its part of the
// tenants' usage to the store three times per lease_ttl (and once at start); a report reads every
// replica's part and the limited tenants' shared counters, and sums them (tenants/site-usage.ts).
// While the store is lost, or when a read fails, the report is this replica's own with
// `scope: "replica"` and why — never an error.

import type { Clock, Timer } from '#src/core/clock.ts';
import type { ClusterGate } from './cluster-gate.ts';
import type { UsageBoardStore } from './usage-board-port.ts';
import {
  replicaTenantsReport,
  replicaUsage,
  sharedRemaining,
  siteTenantsReport,
  utcDay,
  type PublishedUsage,
  type ReplicaUsage,
  type TenantLimits,
  type TenantReport,
  type TenantsReport,
} from '#src/tenants/index.ts';

/** A part is kept a day after it was written: a dead replica's counts of today still count. */
const KEEP_MS = 86_400_000;

export interface SiteTenantsOptions {
  readonly store: UsageBoardStore;
  readonly gate: Pick<ClusterGate, 'shared' | 'storeFailed' | 'status'>;
  readonly clock: Clock;
  readonly replica: string;
  readonly leaseTtlMs: number;
  readonly publishEveryMs: number;
  /** This replica's own report now. */
  readonly local: () => TenantsReport;
  readonly limitsOf: (tenant: string) => TenantLimits | undefined;
}

export class SiteTenants {
  readonly #o: SiteTenantsOptions;
  #timer: Timer | undefined;
  #stopped = false;

  constructor(options: SiteTenantsOptions) {
    this.#o = options;
  }

  start(): void {
    this.#tick();
  }

  stop(): void {
    this.#stopped = true;
    this.#timer?.cancel();
  }

  /** The site's report (scope "site"), or this replica's (scope "replica") while the store cannot be read. */
  async report(): Promise<TenantsReport> {
    const local = this.#o.local();
    if (!this.#o.gate.shared()) return replicaTenantsReport(local, this.#o.gate.status().reason ?? 'the store is lost');
    const day = utcDay(this.#o.clock.now());
    try {
      const limited = local.tenants.filter((t) => hasLimit(t));
      const [parts, peeks] = await Promise.all([
        this.#o.store.readUsage(),
        Promise.all(limited.map(async (t) => [t.name, await this.#o.store.peekTenant(t.name, day)] as const)),
      ]);
      const counters = new Map(peeks);
      const published: PublishedUsage[] = parts.map((p) => ({ replica: p.replica, ageMs: p.ageMs, usage: parseUsage(p.body) }));
      return siteTenantsReport({
        replica: this.#o.replica,
        local,
        day,
        published,
        leaseTtlMs: this.#o.leaseTtlMs,
        remaining: (tenant) => {
          const peek = counters.get(tenant);
          const limits = this.#o.limitsOf(tenant);
          return peek === undefined || limits === undefined ? undefined : sharedRemaining(limits, peek);
        },
      });
    } catch (error) {
      this.#o.gate.storeFailed(error);
      return replicaTenantsReport(local, error instanceof Error ? error.message : String(error));
    }
  }

  #tick(): void {
    if (this.#stopped) return;
    const publish = this.#o.gate.shared()
      ? this.#o.store
          .publishUsage(JSON.stringify(replicaUsage(this.#o.local(), utcDay(this.#o.clock.now()))), KEEP_MS)
          .catch((error: unknown) => this.#o.gate.storeFailed(error))
      : Promise.resolve();
    void publish.then(() => {
      if (!this.#stopped) this.#timer = this.#o.clock.setTimeout(() => this.#tick(), this.#o.publishEveryMs);
    });
  }
}

function hasLimit(t: TenantReport): boolean {
  const l = t.limits;
  return l.maxConcurrent !== null || l.requestsPerMinute !== null || l.tokensPerMinute !== null || l.tokensPerDay !== null;
}

/** A part as another replica wrote it; undefined when it is not of that shape (the replica is still named). */
function parseUsage(body: string): ReplicaUsage | undefined {
  try {
    const value: unknown = JSON.parse(body);
    if (typeof value !== 'object' || value === null) return undefined;
    const v = value as Partial<ReplicaUsage>;
    if (
      typeof v.day !== 'string' ||
      typeof v.tenants !== 'object' ||
      v.tenants === null ||
      typeof v.queues !== 'object' ||
      v.queues === null
    )
      return undefined;
    return v as ReplicaUsage;
  } catch {
    return undefined;
  }
}
