// Micro-benchmark of tenant admission per request, as the request path runs it: find the tenant by
// its key (one SHA-256, one Map lookup, one timingSafeEqual), check the model against its scope,
// admit it in the ledger (concurrency, request and token buckets, the day's budget) and settle it.
// Three setups: the open gateway (no tenant: the directory says so, nothing else runs), one
// `[server] api_keys` key (the tenant `default`, no limits), and 1,000 tenants × 100 keys each,
// every tenant with every limit and a model glob. Run in its own process by run.ts
// (`node bench/tenant-admission.ts` prints one JSON line); each call is timed on its own.

import type { TenantSpec } from '#src/tenants/tenants-config.ts';
import { allowsModel, OPEN_TENANT, rotatingDirectory, TenantLedger, tenantReservation, type Tenant } from '#src/tenants/index.ts';
import { percentile } from './stats.ts';

export interface TenantAdmissionResult {
  readonly setup: 'open gateway' | 'one api key' | '1,000 tenants × 100 keys';
  readonly calls: number;
  readonly p50Us: number;
  readonly p99Us: number;
  readonly meanUs: number;
}

function spec(name: string, keys: readonly string[], limited: boolean): TenantSpec {
  return {
    name,
    keys,
    models: limited ? ['llama-*', 'qwen-*'] : ['*'],
    sites: undefined,
    priority: 'standard',
    weight: 1,
    maxConcurrent: limited ? 1_000 : undefined,
    requestsPerMinute: limited ? 1_000_000_000 : undefined,
    tokensPerMinute: limited ? 1_000_000_000 : undefined,
    tokensPerDay: limited ? 1_000_000_000_000 : undefined,
  };
}

function measure(
  setup: TenantAdmissionResult['setup'],
  tenants: readonly TenantSpec[],
  keys: readonly string[],
  budgetMs: number,
): TenantAdmissionResult {
  const directory = rotatingDirectory(() => tenants);
  const ledger = new TenantLedger(() => Date.now(), tenants);
  let turn = 0;
  const admitOne = (): void => {
    turn += 1;
    const found = directory();
    const tenant: Tenant | undefined = found.open ? OPEN_TENANT : found.identify(keys[turn % keys.length]);
    if (tenant === undefined) throw new Error('benchmark key must be known');
    if (tenant === OPEN_TENANT) return;
    if (!allowsModel(tenant.spec, 'llama-3-8b-instruct')) throw new Error('benchmark model must be in scope');
    const { decision, ticket } = ledger.admit({
      tenant: tenant.spec.name,
      model: 'llama-3-8b-instruct',
      promptTokens: 200,
      reserveTokens: tenantReservation(200, 256, 512),
    });
    if (decision.kind !== 'admitted') throw new Error('benchmark limits must admit');
    ticket.settle({ served: true, promptTokens: 180, completionTokens: 120 });
  };
  const warmupEnd = performance.now() + Math.min(300, budgetMs / 4);
  while (performance.now() < warmupEnd) admitOne();
  const times: number[] = [];
  const end = performance.now() + budgetMs;
  let total = 0n;
  while (performance.now() < end && times.length < 200_000) {
    const started = process.hrtime.bigint();
    admitOne();
    const took = process.hrtime.bigint() - started;
    total += took;
    times.push(Number(took) / 1000);
  }
  return {
    setup,
    calls: times.length,
    p50Us: percentile(times, 50),
    p99Us: percentile(times, 99),
    meanUs: Number(total) / 1000 / times.length,
  };
}

export function measureTenantAdmission(budgetMs: number): TenantAdmissionResult[] {
  const many = Array.from({ length: 1_000 }, (_, t) =>
    spec(
      `tenant-${t}`,
      Array.from({ length: 100 }, (_, k) => `sk-${t}-${k}-${'x'.repeat(32)}`),
      true,
    ),
  );
  const spread = Array.from({ length: 997 }, (_, i) => `sk-${(i * 7) % 1_000}-${(i * 13) % 100}-${'x'.repeat(32)}`);
  return [
    measure('open gateway', [], [''], budgetMs),
    measure('one api key', [spec('default', ['sk-the-one-key'], false)], ['sk-the-one-key'], budgetMs),
    measure('1,000 tenants × 100 keys', many, spread, budgetMs),
  ];
}

if (import.meta.main) {
  const budgetMs = Number(process.argv[2] ?? 1000);
  process.stdout.write(`${JSON.stringify({ event: 'tenant admission', results: measureTenantAdmission(budgetMs) })}\n`);
}
