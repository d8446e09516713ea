// Tenants' metrics: requests per tenant × model × outcome, prompt and completion tokens per tenant
// × model × node (or site), requests in flight and queued per tenant, and 429s per tenant × limit.
// Tenant labels are the configured tenants' names (and `default`), model labels the bounded ones
// the events carry, outcomes and reasons closed sets: every label stays bounded. Registered by the
// tenants feature; the request counters listen only while [[tenants]] are configured (a gateway
// without tenants pays nothing per request for them).

import { Counter, Gauge, type Registry } from 'prom-client';
import { BoundCounter } from '#src/core/bound-series.ts';
import type { ModelQueueReport } from '#src/scheduler/index.ts';

/** A finished request as the tenant series count it (the proxy's `proxy:request-finished`). */
export interface TenantRequestFinished {
  /** The tenant the request was admitted as (absent before it was identified). */
  readonly tenant?: string | undefined;
  /** A bounded label value. */
  readonly model: string;
  readonly node: string | undefined;
  readonly status: number;
  readonly usage?: { readonly promptTokens: number | undefined; readonly completionTokens: number | undefined } | undefined;
}

/** A tenant's limit answered 429 (the proxy's `proxy:tenant-limited`). */
export interface TenantLimited {
  readonly tenant: string;
  readonly reason: 'concurrency' | 'requests' | 'tokens' | 'budget';
}

/**
 * The request plane's events the tenant series count, subscribed for the tenants by the feature
 * list (tenants/ does not import proxy/): each returns its unsubscribe.
 */
export interface TenantRequestEvents {
  /** Deferred: the listener runs for every finished request in order before a scrape reads the series. */
  readonly finished: (listener: (event: TenantRequestFinished) => void) => () => void;
  readonly limited: (listener: (event: TenantLimited) => void) => () => void;
}

export interface TenantMetricSources {
  /** Requests in flight per tenant (queued ones included): the ledger's counts. */
  readonly inFlight: () => ReadonlyMap<string, number>;
  /** Every model's queue by tenant (the scheduler's report). */
  readonly queues: () => Readonly<Record<string, ModelQueueReport>>;
}

/** Pure: a finished request's outcome label. */
export function tenantOutcome(status: number): 'ok' | 'limited' | 'refused' | 'failed' | 'client_gone' {
  if (status === 499) return 'client_gone';
  if (status === 429) return 'limited';
  if (status >= 500) return 'failed';
  if (status >= 400) return 'refused';
  return 'ok';
}

/**
 * The request counters' listening: from the first configured tenant on (a gateway that never had
 * one counts nothing per request; every request there is the open `default` caller's). Kept once
 * begun: a request admitted as a tenant a reload then removed is still counted when it finishes.
 */
export class TenantCounting {
  readonly #listen: () => readonly (() => void)[];
  #off: readonly (() => void)[] | undefined;

  constructor(listen: () => readonly (() => void)[]) {
    this.#listen = listen;
  }

  /** The tenants now in force: counting begins with the first. */
  follow(tenants: readonly unknown[]): void {
    if (this.#off === undefined && tenants.length > 0) this.#off = this.#listen();
  }

  /** Counts what is still to count, and listens no more. */
  stop(): void {
    for (const off of this.#off ?? []) off();
    this.#off = undefined;
  }
}

/** The tenant series on `r`; their request counters count `events` once `follow` sees a tenant. */
export function registerTenantMetrics(r: Registry, sources: TenantMetricSources, events: TenantRequestEvents): TenantCounting {
  const requests = new BoundCounter({
    name: 'gateway_tenant_requests_total',
    help: 'Inference requests per tenant, model and outcome (ok, limited = 429 (a tenant limit or a full queue), refused = other 4xx, failed = 5xx, client_gone = 499).',
    labelNames: ['tenant', 'model', 'outcome'],
    registers: [r],
  });
  const promptTokens = new BoundCounter({
    name: 'gateway_tenant_prompt_tokens_total',
    help: "Prompt tokens of answered requests per tenant, model and node (or site), from the answers' usage.",
    labelNames: ['tenant', 'model', 'node'],
    registers: [r],
  });
  const completionTokens = new BoundCounter({
    name: 'gateway_tenant_completion_tokens_total',
    help: "Completion tokens of answered requests per tenant, model and node (or site), from the answers' usage.",
    labelNames: ['tenant', 'model', 'node'],
    registers: [r],
  });
  const limited = new Counter({
    name: 'gateway_tenant_limited_total',
    help: "Requests a tenant's limit answered 429, per tenant and limit (concurrency, requests, tokens, budget).",
    labelNames: ['tenant', 'reason'],
    registers: [r],
  });
  new Gauge({
    name: 'gateway_tenant_in_flight',
    help: 'Requests in flight per tenant, from admission to the end of the response (queued ones included).',
    labelNames: ['tenant'],
    registers: [r],
    collect() {
      this.reset();
      for (const [tenant, n] of sources.inFlight()) this.set({ tenant }, n);
    },
  });
  new Gauge({
    name: 'gateway_tenant_queued',
    help: "Requests waiting in a model's queue per tenant.",
    labelNames: ['tenant'],
    registers: [r],
    collect() {
      this.reset();
      const queued = new Map<string, number>();
      for (const queue of Object.values(sources.queues())) {
        for (const [tenant, n] of Object.entries(queue.byTenant)) queued.set(tenant, (queued.get(tenant) ?? 0) + n);
      }
      for (const [tenant, n] of queued) this.set({ tenant }, n);
    },
  });
  return new TenantCounting(() => [
    events.finished((e) => {
      const tenant = e.tenant;
      if (tenant === undefined) return;
      requests.inc(1, tenant, e.model, tenantOutcome(e.status));
      const usage = e.usage;
      if (usage === undefined) return;
      const node = e.node ?? 'none';
      if (usage.promptTokens !== undefined) promptTokens.inc(usage.promptTokens, tenant, e.model, node);
      if (usage.completionTokens !== undefined) completionTokens.inc(usage.completionTokens, tenant, e.model, node);
    }),
    events.limited((e) => limited.inc({ tenant: e.tenant, reason: e.reason })),
  ]);
}
