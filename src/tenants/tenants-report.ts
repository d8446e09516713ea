// Pure: GET /admin/tenants from the tenants in force, the ledger's figures and the queues.

import type { TenantSpec } from '#src/tenants/tenants-config.ts';
import type { TenantFigures } from './ledger.ts';
import type { ModelQueueReport, TenantReport, TenantsReport } from './tenant-report.ts';

const NONE: TenantFigures = {
  inFlight: 0,
  minute: { requests: 0, tokens: 0 },
  today: { requests: 0, promptTokens: 0, completionTokens: 0 },
  remaining: { requests: null, tokens: null, budget: null },
};

export function tenantsReport(
  tenants: readonly TenantSpec[],
  figures: (tenant: string) => TenantFigures | undefined,
  tags: (spec: TenantSpec) => readonly string[],
  queues: Readonly<Record<string, ModelQueueReport>>,
): TenantsReport {
  const queuedBy = new Map<string, number>();
  for (const queue of Object.values(queues)) {
    for (const [tenant, n] of Object.entries(queue.byTenant)) queuedBy.set(tenant, (queuedBy.get(tenant) ?? 0) + n);
  }
  const reports = tenants.map((spec): TenantReport => {
    const f = figures(spec.name) ?? NONE;
    return {
      name: spec.name,
      priority: spec.priority,
      weight: spec.weight,
      keys: tags(spec),
      limits: {
        maxConcurrent: spec.maxConcurrent ?? null,
        requestsPerMinute: spec.requestsPerMinute ?? null,
        tokensPerMinute: spec.tokensPerMinute ?? null,
        tokensPerDay: spec.tokensPerDay ?? null,
      },
      inFlight: f.inFlight,
      queued: queuedBy.get(spec.name) ?? 0,
      minute: f.minute,
      today: f.today,
      remaining: f.remaining,
    };
  });
  return { tenants: reports, queues };
}
