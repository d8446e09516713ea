import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { TenantSpec } from '#src/tenants/tenants-config.ts';
import { tenantsReport, TenantLedger } from '#src/tenants/index.ts';
import { tenantOutcome } from '#src/tenants/tenant-metrics.ts';
import { tenantSpec } from '#test/fixtures/builders.ts';

const spec = (name: string, more: Partial<TenantSpec> = {}): TenantSpec => tenantSpec(name, more);

test("/admin/tenants: limits as null where unset, figures from the ledger, queued summed over the models' queues, keys as tags", () => {
  const tenants = [spec('a', { requestsPerMinute: 10, tokensPerDay: 1_000 }), spec('b', { priority: 'batch', weight: 3 })];
  const ledger = new TenantLedger(() => Date.UTC(2026, 11, 2, 12), tenants);
  ledger.admit({ tenant: 'a', model: 'm', promptTokens: 10, reserveTokens: 100 });
  const queues = {
    m: { byClass: { interactive: 0, standard: 1, batch: 2 }, byTenant: { a: 1, b: 2 } },
    n: { byClass: { interactive: 0, standard: 0, batch: 1 }, byTenant: { b: 1 } },
  };
  const report = tenantsReport(
    tenants,
    (name) => ledger.figures(name),
    (s) => s.keys.map(() => 'tag00000'),
    queues,
  );
  assert.deepEqual(report.queues, queues);
  const [a, b] = report.tenants;
  assert.deepEqual(a, {
    name: 'a',
    priority: 'standard',
    weight: 1,
    keys: ['tag00000'],
    limits: { maxConcurrent: null, requestsPerMinute: 10, tokensPerMinute: null, tokensPerDay: 1_000 },
    inFlight: 1,
    queued: 1,
    minute: { requests: 1, tokens: 100 },
    today: { requests: 1, promptTokens: 0, completionTokens: 0 },
    remaining: { requests: 9, tokens: null, budget: 900 },
  });
  assert.equal(b?.queued, 3);
  assert.equal(b?.priority, 'batch');
});

test("tenant metrics: a finished request's outcome by its status", () => {
  const cases: [number, string][] = [
    [200, 'ok'],
    [304, 'ok'],
    [400, 'refused'],
    [404, 'refused'],
    [429, 'limited'],
    [499, 'client_gone'],
    [500, 'failed'],
    [503, 'failed'],
  ];
  for (const [status, outcome] of cases) assert.equal(tenantOutcome(status), outcome, String(status));
});
