// The tenants feature, wiring only: the gateway's one limits ledger (every tenant admission, from
// this thread or a worker, is judged here), budgets across restarts (the usage store in [server]
// state_dir and its flusher: usage-part.ts), and GET /admin/tenants (tenants-view.ts). Always
// listed: a reload may add the first tenant, and the ledger then judges it; with none, the ledger
// admits everyone unlimited.

import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Clock } from '#src/core/clock.ts';
import type { AdminView, Feature } from '#src/core/feature.ts';
import type { GatewayConfig } from '#src/config/index.ts';
import type { StateWriteFaults } from '#src/state/index.ts';
import { TenantLedger } from './ledger.ts';
import { TenantsView } from './tenants-view.ts';
import { UsagePart, type UsageStopOutcome } from './usage-part.ts';
import { storeDegrades, usageHealthPart } from './usage-health.ts';
import type { ModelQueueReport, TenantsReport } from './tenant-report.ts';
import { registerStateMetrics } from './usage-metrics.ts';
import { registerTenantMetrics, type TenantCounting, type TenantRequestEvents } from './tenant-metrics.ts';

export interface TenantsFeatureDeps {
  readonly clock: Clock;
  readonly logger: Logger;
  /** The tenants in force (the config's, read at each report). */
  readonly tenants: () => GatewayConfig['tenants'];
  /** Every model's queue by class and tenant (the scheduler's report). */
  readonly queues: () => Readonly<Record<string, ModelQueueReport>>;
  /** The request plane's events the tenant series count (finished requests, limits answered 429). */
  readonly events: TenantRequestEvents;
  /** Tests: make the state file's writes fail as a full disk would; absent = none. */
  readonly faults?: StateWriteFaults | undefined;
}

/** What tenants add to the owner's parts (gateway/features.ts names them). */
export interface TenantsParts {
  /** The request planes' tenant admission, and the tenant gauges' in-flight counts. */
  readonly ledger: TenantLedger;
  /** How the last write at stop went (saved until a stop says otherwise). */
  readonly usageSaved: () => UsageStopOutcome;
}

export class TenantsFeature implements Feature<GatewayConfig, TenantsParts> {
  readonly name = 'tenants';
  readonly parts: TenantsParts;
  readonly ledger: TenantLedger;
  readonly #usage: UsagePart;
  readonly #view: TenantsView;
  readonly #deps: TenantsFeatureDeps;
  /** [server] state_dir: a failing state file makes /health degraded (absent without one). */
  readonly degraded: (() => boolean) | undefined;
  #counting: TenantCounting | undefined;
  #saved: UsageStopOutcome = { saved: true };

  /** Opens the usage store first: a state file this build cannot use stops the start (StateFileError). */
  constructor(config: GatewayConfig, deps: TenantsFeatureDeps) {
    const { clock } = deps;
    this.#deps = deps;
    this.#usage = new UsagePart(config, { clock, logger: deps.logger, faults: deps.faults });
    this.ledger = new TenantLedger(() => clock.now(), config.tenants);
    // Today's stored usage before anything is admitted (tokens_per_day is judged by the day's sum).
    this.#usage.connect(this.ledger);
    this.#view = new TenantsView({ tenants: deps.tenants, figures: (name) => this.ledger.figures(name), queues: deps.queues });
    this.parts = {
      ledger: this.ledger,
      usageSaved: () => this.#saved,
    };
    this.degraded = this.#usage.store === undefined ? undefined : () => storeDegrades(this.#usage.health());
  }

  /** This gateway's own GET /admin/tenants ([cluster] sums every replica's). */
  report(): TenantsReport {
    return this.#view.report();
  }

  /** GET /admin/tenants: the tenants in force with the ledger's figures and the queues. */
  adminViews(): Readonly<Record<string, AdminView>> {
    return { '/admin/tenants': () => this.report() };
  }

  /** The detailed /health's `state`: the state file's writes ([server] state_dir; none without one). */
  health(): Readonly<Record<string, unknown>> | undefined {
    return usageHealthPart(this.#usage.health());
  }

  /** The state file's gauges and the tenant series (src/tenants/tenant-metrics.ts). */
  metrics(registry: Registry): void {
    registerStateMetrics(registry, () => this.#usage.health());
    const sources = { inFlight: () => this.ledger.inFlight(), queues: this.#deps.queues };
    this.#counting = registerTenantMetrics(registry, sources, this.#deps.events);
    this.#counting.follow(this.#deps.tenants());
  }

  start(): void {
    this.#usage.start();
  }

  /** The tenant series count from the first tenant a reload adds. */
  reload(_previous: GatewayConfig, next: GatewayConfig): void {
    this.#counting?.follow(next.tenants);
  }

  /**
   * Only once every request plane judges tenants by the new config (workers confirmed it): a worker
   * still seeing a tenant unlimited admits without asking, so a limit the tenant just gained
   * applies once none can. Every counter is kept by tenant name.
   */
  reloaded(next: GatewayConfig): void {
    this.ledger.configure(next.tenants);
  }

  /** After the drain: the last requests' usage is in the final write (saved or not: usageSaved). */
  async stop(): Promise<void> {
    this.#counting?.stop();
    this.#saved = await this.#usage.stop();
  }
}
