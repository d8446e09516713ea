// The cluster feature (`[cluster]`), wiring only: its gate over the scheduler's admission, tenant
// limits and GET /admin/tenants across replicas, one wake per node per window, the model switches
// and holds shared, and the leader leases other features ask for (asked-leases.ts: the mesh's
// publication, the batch runner). The rest of the cluster folder (and with it the
// store client) is loaded by a dynamic import in `start`, so a gateway without [cluster] never
// loads it. Until `start` has run, an admission waits for it (start is bounded in time: a store
// that does not answer leaves the gate in fallback, and it joins when the store answers).

import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Clock } from '#src/core/clock.ts';
import type { AdminView, Feature } from '#src/core/feature.ts';
import type { GatewayConfig } from '#src/config/index.ts';
import type { ClusterConfig } from '#src/cluster/cluster-config.ts';
import type { WakeSpec } from '#src/config/types.ts';
import type { HoldStore, SwitchTickets, WakeDelivery } from '#src/nodes/index.ts';
import type { PublishGate } from '#src/mesh/publish-gate.ts';
import type { Scheduler } from '#src/scheduler/index.ts';
import { sessionTableKeys, type SessionTable } from '#src/routing/index.ts';
import type { TenantAdmission, TenantAsk, TenantLedger, TenantsReport } from '#src/tenants/index.ts';
import type { Admitter } from './cluster-admission.ts';
import type { ClusterGate } from './cluster-gate.ts';
import type { ClusterStatus } from './fallback-share.ts';
import { ledgerAlone, type SharedTenants } from './cluster-tenants.ts';
import type { SiteTenants } from './site-tenants.ts';
import { registerClusterMetrics } from './cluster-metrics.ts';
import { AskedLeases, type HeldLease } from './asked-leases.ts';
import { clusterReport } from './cluster-report.ts';

/** The scheduler's admission as a request plane sees it (the shared lease goes on its `admit`). */
export type SchedulerAdmission = Pick<Scheduler, 'admit' | 'hasAlternative' | 'routerRooms'>;
type WakeSend = (spec: WakeSpec) => Promise<WakeDelivery>;
type WakeSender = (spec: WakeSpec, target: { readonly node: string; readonly windowMs: number }) => Promise<WakeDelivery>;

/** What [cluster] adds to the owner's parts (gateway/features.ts names them). */
export interface ClusterParts {
  readonly wrapAdmission: (inner: SchedulerAdmission) => SchedulerAdmission;
  readonly admitTenant: (ask: TenantAsk, limited: boolean) => Promise<TenantAdmission>;
  readonly wakeSender: (send: WakeSend) => WakeSender;
  /** The routing's session table, shared through the store once joined (`ttlMs`: `[routing] session_ttl`). */
  readonly shareSessions: (table: SessionTable, ttlMs: () => number) => void;
}

export interface ClusterFeatureDeps {
  readonly clock: Clock;
  readonly logger: Logger;
  /** What the shared lease wraps: the scheduler itself (read at start). */
  readonly scheduler: () => Admitter;
  /** The gateway's limits ledger: limited tenants are counted across replicas on top of it. */
  readonly ledger: Pick<TenantLedger, 'admit' | 'limitsOf'>;
  /** This replica's own GET /admin/tenants (the site's sums every replica's). */
  readonly tenantsReport: () => TenantsReport;
  /** The operator's holds are kept in the store from the join on: every replica's reconciler reads them. */
  readonly holds?: (store: HoldStore, replica: string) => void;
  /** The one switch book (shared across replicas once joined) and what a remote switch's change asks for. */
  readonly switches?: { readonly book: SwitchTickets; readonly changed: (node: string) => void };
}

export class ClusterFeature implements Feature<GatewayConfig, ClusterParts> {
  readonly name = 'cluster';
  readonly parts: ClusterParts;
  readonly #config: ClusterConfig;
  readonly #deps: ClusterFeatureDeps;
  readonly replica: string;
  #gate: ClusterGate | undefined;
  #admit: Admitter['admit'] | undefined;
  #tenants: SharedTenants | undefined;
  #site: SiteTenants | undefined;
  /** The leader leases asked for (the mesh's publication, the batch runner), held from the join on. */
  readonly #leases = new AskedLeases();
  /** The session table to share (given before `start`), and once joined, read from before each session's admission. */
  #sessions: { readonly table: SessionTable; readonly ttlMs: () => number } | undefined;
  #sessionsShared = false;
  #close: (() => Promise<void>) | undefined;
  readonly #started: Promise<void>;
  #begin: () => void = () => {};

  constructor(config: ClusterConfig, deps: ClusterFeatureDeps) {
    this.#config = config;
    this.#deps = deps;
    this.replica = config.replica ?? `${hostname()}-${process.pid}`;
    this.#started = new Promise((resolve) => {
      this.#begin = resolve;
    });
    this.parts = {
      wrapAdmission: (inner) => this.admission(inner),
      admitTenant: this.tenantAdmission(),
      wakeSender: (send) => this.wakeSender(send),
      shareSessions: (table, ttlMs) => {
        this.#sessions = { table, ttlMs };
      },
    };
  }

  metrics(registry: Registry): void {
    registerClusterMetrics(
      registry,
      () => this.status(),
      () => this.#tenants?.unconfirmedCount() ?? 0,
    );
  }

  /** Loads the cluster code and the client, joins the store (or starts in fallback), and opens admission. */
  async start(): Promise<void> {
    try {
      await this.#join(this.#deps.scheduler());
    } finally {
      this.#begin();
    }
  }

  async #join(inner: Admitter): Promise<void> {
    const cluster = await import('./index.ts');
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
    const sessions = this.#sessions;
    if (sessions !== undefined) {
      sessions.table.share(new cluster.SharedSessions(store, this.#deps.logger), sessions.ttlMs);
      this.#sessionsShared = true;
    }
    this.#admit = cluster.clusterAdmit(
      inner,
      gate,
      this.#deps.clock,
      switches === undefined ? undefined : { seen: (node) => switches.look(node), pollMs: cluster.fallbackPollMs(leaseTtlMs) },
    );
    const tenants = new cluster.SharedTenants({
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
    const site = new cluster.SiteTenants({
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
    const leaders = this.#leases.asks().map(
      (ask) =>
        new cluster.LeaderLease({
          store,
          name: ask.name,
          replica: this.replica,
          leaseTtlMs,
          clock: this.#deps.clock,
          onChange: (leading) => this.#lead(ask.name, leading, leading ? ask.holding : ask.notHolding),
          lost: (error) => gate.storeFailed(error),
          leadsWhileUnreachable: ask.leadsWhileUnreachable,
        }),
    );
    await Promise.all(leaders.map((leader) => leader.start()));
    this.#close = async () => {
      await Promise.all(leaders.map((leader) => leader.stop()));
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
        // A session another replica placed or moved (an answer it passed on): read in before the request is routed.
        if (this.#sessionsShared && (req.sessionKey !== undefined || req.previousResponseId !== undefined)) {
          const keys = sessionTableKeys(req);
          await this.#sessions?.table.readIn(keys.sessions, keys.answers, this.#deps.clock.now());
        }
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
    const lease = this.#leases.ask({
      name: 'mesh',
      leadsWhileUnreachable: true,
      holding: "this replica publishes the site's mesh record (leader lease held)",
      notHolding: "another replica publishes the site's mesh record",
    });
    return { mayPublish: () => lease.held(), onChange: (listener) => lease.onChange(listener) };
  }

  /**
   * [batch] shared_dir: the replica that runs the shared directory's jobs (a leader lease, "batch").
   * Not held while the store cannot be reached: a replica that cannot renew stops running jobs
   * before its key expires and another takes them over. Ask before `start`.
   */
  batchRunnerLease(): HeldLease {
    return this.#leases.ask({
      name: 'batch',
      leadsWhileUnreachable: false,
      holding: "this replica runs the shared directory's batch jobs (batch lease held)",
      notHolding:
        "this replica does not run the shared directory's batch jobs (another holds the batch lease, or the store cannot be reached)",
    });
  }

  #lead(name: string, leading: boolean, message: string): void {
    this.#deps.logger.info({ replica: this.replica, lease: name, leading }, message);
    this.#leases.set(name, leading);
  }

  /** The admission port's admitTenant with limited tenants counted across replicas (before `start`: waits for it). */
  tenantAdmission(): (ask: TenantAsk, limited: boolean) => Promise<TenantAdmission> {
    return async (ask, limited) => {
      await this.#started;
      const tenants = this.#tenants;
      return tenants === undefined ? ledgerAlone(this.#deps.ledger, ask, limited) : tenants.admit(ask, limited);
    };
  }

  /** GET /admin/tenants for the whole site (over the tenants feature's own report). */
  adminViews(): Readonly<Record<string, AdminView>> {
    return { '/admin/tenants': () => this.tenantsReport() };
  }

  /** GET /admin/tenants for the whole site (scope "site"), or this replica's own while the store cannot be read. */
  async tenantsReport(): Promise<TenantsReport> {
    await this.#started;
    return this.#site?.report() ?? this.#deps.tenantsReport();
  }

  /** The scheduler's admission port with the shared lease on its `admit` (the rest is the scheduler's). */
  admission(scheduler: SchedulerAdmission): SchedulerAdmission {
    const shared = this.admitter(scheduler);
    return {
      admit: (req, settings, signal, firstAttempt) => shared.admit(req, settings, signal, firstAttempt),
      hasAlternative: (req) => scheduler.hasAlternative(req),
      routerRooms: () => scheduler.routerRooms(),
    };
  }

  /** The wake sender with one wake per node per wake window across the replicas. */
  wakeSender(send: WakeSend): WakeSender {
    return async (spec, target) => {
      const mine = (await this.#gate?.wakeOnce(target.node, target.windowMs)) ?? true;
      return mine ? send(spec) : { ok: true, elsewhere: true };
    };
  }

  /** /health details, /admin/runtime and metrics: the mode, live replicas, leases held. */
  status(): ClusterStatus | undefined {
    return this.#gate?.status();
  }

  /** The status as the admin documents show it (cluster-report.ts). */
  report(): Readonly<Record<string, unknown>> | undefined {
    const status = this.status();
    return status === undefined
      ? undefined
      : clusterReport(
          status,
          this.#tenants?.unconfirmedCount() ?? 0,
          this.#leases.asked('mesh') ? this.#leases.holding('mesh') === true : undefined,
        );
  }

  /** /admin/runtime's `cluster` (undefined = not joined yet). */
  runtime(): Readonly<Record<string, unknown>> | undefined {
    const report = this.report();
    return report === undefined ? undefined : { cluster: report };
  }

  /** The detailed /health's `cluster`: as in /admin/runtime. */
  health(): Readonly<Record<string, unknown>> | undefined {
    return this.runtime();
  }

  async stop(): Promise<void> {
    await this.#close?.();
  }
}
