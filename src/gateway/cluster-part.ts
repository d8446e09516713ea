// Wiring only: [cluster]'s gate over the scheduler's admission. The cluster folder (and with it
// the store client) is loaded by a dynamic import in `start`, so a gateway without [cluster]
// never loads it. Until `start` has run, an admission waits for it (start is bounded in time: a
// store that does not answer leaves the gate in fallback, and it joins when the store answers).

import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { Gauge, type Registry } from 'prom-client';
import type { Clock } from '#src/core/clock.ts';
import type { ClusterConfig } from '#src/config/index.ts';
import type { WakeSpec } from '#src/config/types.ts';
import type { HoldStore, SwitchTickets, WakeDelivery } from '#src/nodes/index.ts';
import type { Admitter, ClusterGate, ClusterStatus } from '#src/cluster/index.ts';
import type { PublishGate } from '#src/mesh/publish-gate.ts';
import type { Scheduler } from '#src/scheduler/index.ts';
import type { TenantAdmission, TenantAsk, TenantLedger, TenantsReport } from '#src/tenants/index.ts';
import { SharedTenants } from '#src/cluster/cluster-tenants.ts';
import { SiteTenants } from '#src/cluster/site-tenants.ts';

export interface ClusterPartDeps {
  readonly clock: Clock;
  readonly logger: Logger;
  /** The gateway's metrics registry: the cluster gauges are registered on it. */
  readonly metrics: Registry;
  /** The gateway's limits ledger: limited tenants are counted across replicas on top of it. */
  readonly ledger: Pick<TenantLedger, 'admit' | 'limitsOf'>;
  /** This replica's own GET /admin/tenants (the site's sums every replica's). */
  readonly tenantsReport: () => TenantsReport;
  /** The operator's holds are kept in the store from the join on: every replica's reconciler reads them. */
  readonly holds?: (store: HoldStore, replica: string) => void;
  /** The one switch book (shared across replicas once joined) and what a remote switch's change asks for. */
  readonly switches?: { readonly book: SwitchTickets; readonly changed: (node: string) => void };
}

export class ClusterPart {
  readonly #config: ClusterConfig;
  readonly #deps: ClusterPartDeps;
  readonly replica: string;
  #gate: ClusterGate | undefined;
  #admit: Admitter['admit'] | undefined;
  #tenants: SharedTenants | undefined;
  #site: SiteTenants | undefined;
  /** [mesh]: whether this replica publishes the site's record (undefined = no leader lease asked for). */
  #leading: boolean | undefined;
  readonly #leaderListeners = new Set<() => void>();
  #close: (() => Promise<void>) | undefined;
  readonly #started: Promise<void>;
  #begin: () => void = () => {};

  constructor(config: ClusterConfig, deps: ClusterPartDeps) {
    this.#config = config;
    this.#deps = deps;
    this.replica = config.replica ?? `${hostname()}-${process.pid}`;
    this.#started = new Promise((resolve) => {
      this.#begin = resolve;
    });
    registerClusterMetrics(
      deps.metrics,
      () => this.status(),
      () => this.#tenants?.unconfirmedCount() ?? 0,
    );
  }

  /** Loads the cluster code and the client, joins the store (or starts in fallback), and opens admission. */
  async start(inner: Admitter): Promise<void> {
    try {
      await this.#join(inner);
    } finally {
      this.#begin();
    }
  }

  async #join(inner: Admitter): Promise<void> {
    const cluster = await import('#src/cluster/index.ts');
    const { leaseTtlMs } = this.#config;
    const store = new cluster.RedisStore({
      url: this.#config.store,
      password: this.#config.password,
      replica: this.replica,
      leaseTtlMs,
      callTimeoutMs: cluster.callTimeoutMs(leaseTtlMs),
      prefix: this.#config.prefix,
    });
    // A store down at start is not fatal: the gate starts in fallback and joins when it answers.
    await store.connect().catch(() => undefined);
    const gate = new cluster.ClusterGate({
      store,
      replica: this.replica,
      leaseTtlMs,
      clock: this.#deps.clock,
      logger: this.#deps.logger,
    });
    await gate.start();
    this.#gate = gate;
    const sw = this.#deps.switches;
    const switches =
      sw === undefined
        ? undefined
        : new cluster.SharedSwitches({
            store,
            gate,
            replica: this.replica,
            leaseTtlMs,
            clock: this.#deps.clock,
            changed: sw.changed,
          });
    if (switches !== undefined && sw !== undefined) {
      switches.start();
      sw.book.share(switches);
    }
    this.#deps.holds?.(store, this.replica);
    this.#admit = cluster.clusterAdmit(
      inner,
      gate,
      this.#deps.clock,
      switches === undefined ? undefined : { seen: (node) => switches.look(node), pollMs: cluster.fallbackPollMs(leaseTtlMs) },
    );
    const tenants = new SharedTenants({
      ledger: this.#deps.ledger,
      store,
      gate,
      clock: this.#deps.clock,
      replica: this.replica,
      renewEveryMs: cluster.renewEveryMs(leaseTtlMs),
      logger: this.#deps.logger,
    });
    tenants.start();
    this.#tenants = tenants;
    const site = new SiteTenants({
      store,
      gate,
      clock: this.#deps.clock,
      replica: this.replica,
      leaseTtlMs,
      publishEveryMs: cluster.renewEveryMs(leaseTtlMs),
      local: this.#deps.tenantsReport,
      limitsOf: (tenant) => this.#deps.ledger.limitsOf(tenant),
    });
    site.start();
    this.#site = site;
    const leader =
      this.#leading === undefined
        ? undefined
        : new cluster.LeaderLease({
            store,
            name: 'mesh',
            replica: this.replica,
            leaseTtlMs,
            clock: this.#deps.clock,
            onChange: (leading) => this.#lead(leading),
            lost: (error) => gate.storeFailed(error),
          });
    await leader?.start();
    this.#close = async () => {
      await leader?.stop();
      tenants.stop();
      site.stop();
      switches?.stop();
      gate.stop();
      await store.close();
    };
  }

  /** The admission with the shared lease: requests before `start` wait for it. */
  admitter(inner: Admitter): Admitter {
    return {
      admit: async (req, settings, signal, firstAttempt) => {
        await this.#started;
        const admit = this.#admit;
        return admit === undefined
          ? inner.admit(req, settings, signal, firstAttempt)
          : admit(req, settings, signal, firstAttempt);
      },
    };
  }

  /**
   * [mesh]: the site's one publisher among the replicas (a leader lease). Ask before `start`; until
   * the lease's first answer this replica does not publish.
   */
  publishGate(): PublishGate {
    this.#leading ??= false;
    return {
      mayPublish: () => this.#leading === true,
      onChange: (listener) => {
        this.#leaderListeners.add(listener);
        return () => this.#leaderListeners.delete(listener);
      },
    };
  }

  #lead(leading: boolean): void {
    this.#leading = leading;
    this.#deps.logger.info(
      { replica: this.replica, leading },
      leading
        ? "this replica publishes the site's mesh record (leader lease held)"
        : "another replica publishes the site's mesh record",
    );
    for (const listener of [...this.#leaderListeners]) listener();
  }

  /** The admission port's admitTenant with limited tenants counted across replicas (before `start`: waits for it). */
  tenantAdmission(): (ask: TenantAsk, limited: boolean) => Promise<TenantAdmission> {
    return async (ask, limited) => {
      await this.#started;
      const tenants = this.#tenants;
      if (tenants !== undefined) return tenants.admit(ask, limited);
      const { decision, ticket } = this.#deps.ledger.admit(ask, !limited);
      return decision.kind === 'limited'
        ? decision
        : { kind: 'admitted', figures: decision.figures, settle: (outcome) => ticket.settle(outcome) };
    };
  }

  /** GET /admin/tenants for the whole site (scope "site"), or this replica's own while the store cannot be read. */
  async tenantsReport(): Promise<TenantsReport> {
    await this.#started;
    return this.#site?.report() ?? this.#deps.tenantsReport();
  }

  /** The scheduler's admission port with the shared lease on its `admit` (the rest is the scheduler's). */
  admission(scheduler: Scheduler): Pick<Scheduler, 'admit' | 'hasAlternative' | 'routerRooms'> {
    const shared = this.admitter(scheduler);
    return {
      admit: (req, settings, signal, firstAttempt) => shared.admit(req, settings, signal, firstAttempt),
      hasAlternative: (req) => scheduler.hasAlternative(req),
      routerRooms: () => scheduler.routerRooms(),
    };
  }

  /** The wake sender with one wake per node per wake window across the replicas. */
  wakeSender(
    send: (spec: WakeSpec) => Promise<WakeDelivery>,
  ): (spec: WakeSpec, target: { readonly node: string; readonly windowMs: number }) => Promise<WakeDelivery> {
    return async (spec, target) => {
      const mine = (await this.#gate?.wakeOnce(target.node, target.windowMs)) ?? true;
      return mine ? send(spec) : { ok: true, elsewhere: true };
    };
  }

  /** /health details, /admin/runtime and metrics: the mode, live replicas, leases held. */
  status(): ClusterStatus | undefined {
    return this.#gate?.status();
  }

  /** The status as the admin documents show it (snake_case, times as ISO strings). */
  report(): Readonly<Record<string, unknown>> | undefined {
    const s = this.status();
    if (s === undefined) return undefined;
    return {
      replica: s.replica,
      store: s.mode === 'shared' ? 'shared' : 'fallback',
      live_replicas: s.liveReplicas,
      leases_held: s.leases,
      waiters: s.waiters,
      store_losses: s.losses,
      // Fallback usage (tenant batches, settles) the store has not confirmed yet: 0 once a rejoin is complete.
      tenant_usage_unconfirmed: this.#tenants?.unconfirmedCount() ?? 0,
      ...(this.#leading === undefined ? {} : { mesh_leader: this.#leading }),
      ...(s.since === undefined ? {} : { fallback_since: new Date(s.since).toISOString() }),
      ...(s.reason === undefined ? {} : { fallback_reason: s.reason }),
    };
  }

  async stop(): Promise<void> {
    await this.#close?.();
  }
}

function registerClusterMetrics(registry: Registry, status: () => ClusterStatus | undefined, unconfirmed: () => number): void {
  const gauge = (name: string, help: string, read: (s: ClusterStatus) => number): void => {
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        const now = status();
        if (now !== undefined) this.set(read(now));
      },
    });
  };
  gauge(
    'gateway_cluster_store_up',
    "1 while this replica shares slot leases through the store, 0 while it falls back to its share of each node's slots.",
    (s) => (s.mode === 'shared' ? 1 : 0),
  );
  gauge(
    'gateway_cluster_store_losses',
    'Times this replica lost the store since it started (each loss is logged once).',
    (s) => s.losses,
  );
  gauge(
    'gateway_cluster_live_replicas',
    'Replicas alive as the store last counted them (this one included).',
    (s) => s.liveReplicas,
  );
  gauge('gateway_cluster_leases_held', 'Slot leases this replica holds across the cluster now.', (s) => s.leases);
  gauge('gateway_cluster_waiters', 'Requests of this replica waiting in the global queues now.', (s) => s.waiters);
  gauge(
    'gateway_cluster_tenant_usage_unconfirmed',
    'Tenant usage counted alone in fallback (batches per tenant, settles) the store has not confirmed yet; 0 once a rejoin is complete.',
    () => unconfirmed(),
  );
}
