// [cluster]: tenant limits counted across replicas. A limited tenant's request is checked and
// reserved in the store in one atomic step (cluster/tenant-lua.ts); the verdict's description
// (429 figures, retry-after, x-ratelimit-*) is the tenants' own pure decision over the shared
// figures. The replica's own ledger still counts every request (usage rows, /admin/tenants).
// While the store is lost (the slot gate says so, logged once), each tenant's limits fall back to
// this replica's share: limit / live replicas, at least 1.
//
// Each request settles in one place, once. One reserved in the store settles in the store (the
// settle applies once per ticket): if the store is lost when it ends, or the settle's answer is
// lost, it is kept and sent again when the store is back. One admitted in fallback settles in the
// replica's ledger and its usage goes to the fallback tally (tenants/fallback-tally.ts), never to
// the store's settle; at the rejoin (and at each renewal after it while anything is left) the
// tally is added to the shared buckets and day keys, once per batch id, and dropped only once the
// store confirmed. The day is the store's (TIME): the replica sends candidates around its clock
// plus the last offset the store showed, and counts its fallback days by that same estimate.

import { randomBytes } from 'node:crypto';
import type { Clock, Timer } from '#src/core/clock.ts';
import type { ClusterGate } from './cluster-gate.ts';
import type { SharedSettle, StoreDays, TenantStore } from './tenant-store-port.ts';
import {
  dayCandidates,
  decideAt,
  FallbackTally,
  ledgerAdmission,
  usedTokens,
  type TenantAdmission,
  type TenantAsk,
  type TenantLedger,
} from '#src/tenants/index.ts';

/** A day's key is kept an hour past the day's end (a request still open at midnight settles into it). */
const DAY_GRACE_MS = 3_600_000;

export interface SharedTenantsOptions {
  readonly ledger: Pick<TenantLedger, 'admit' | 'limitsOf'>;
  readonly store: TenantStore;
  readonly gate: Pick<ClusterGate, 'shared' | 'storeFailed' | 'status' | 'onRejoin'>;
  readonly clock: Clock;
  readonly replica: string;
  /** How often running requests are renewed in the store (three times per lease_ttl). */
  readonly renewEveryMs: number;
  /** Told the outcome of each rejoin's flush (logged; tests wait on it). */
  readonly logger: { info(fields: object, message: string): void };
}

export class SharedTenants {
  readonly #o: SharedTenantsOptions;
  readonly #local: (ask: TenantAsk) => Promise<TenantAdmission>;
  /** Tickets reserved in the store and still running, by tenant (renewed; a dead replica's expire). */
  readonly #open = new Map<string, Set<string>>();
  readonly #run = randomBytes(4).toString('hex');
  #seq = 0;
  #timer: Timer | undefined;
  #stopped = false;
  /** Usage of requests admitted in fallback, until the store confirmed it has it. */
  readonly #tally = new FallbackTally();
  /** Settles of store tickets not confirmed by the store (lost, or ended in fallback), by ticket. */
  readonly #unsettled = new Map<string, SharedSettle>();
  /** The store's clock minus this replica's, as last answered (the day is the store's). */
  #offsetMs = 0;
  #flushing = false;

  constructor(options: SharedTenantsOptions) {
    this.#o = options;
    this.#local = ledgerAdmission(options.ledger);
    options.gate.onRejoin(() => void this.flush());
  }

  start(): void {
    this.#schedule();
  }

  stop(): void {
    this.#stopped = true;
    this.#timer?.cancel();
  }

  /** The admission port's admitTenant with the limits counted across replicas. Never rejects. */
  async admit(ask: TenantAsk, limited: boolean): Promise<TenantAdmission> {
    const limits = this.#o.ledger.limitsOf(ask.tenant);
    // A tenant without limits (or unknown since a reload) has nothing to share.
    if (!limited || limits === undefined) return this.#local(ask);
    if (this.#o.gate.shared()) {
      this.#seq += 1;
      const ticket = `${this.#o.replica}/${this.#run}/${this.#seq}`;
      const nowMs = this.#o.clock.now();
      const days = this.#days(nowMs);
      const answer = await this.#o.store
        .reserve({ tenant: ask.tenant, ticket, limits, cost: ask.reserveTokens, days, force: false })
        .catch((error: unknown) => {
          // The reserve may still reach the store late: it is cancelled when the store is back (once, if it was counted).
          this.#unsettled.set(ticket, {
            tenant: ask.tenant,
            ticket,
            tokensPerMinute: limits.tokensPerMinute,
            used: 0,
            admitted: days,
            ended: days,
          });
          this.#o.gate.storeFailed(error);
          return undefined;
        });
      if (answer !== undefined) {
        if (answer.storeNowMs > 0) this.#offsetMs = answer.storeNowMs - this.#o.clock.now();
        const judged = decideAt(ask, limits, answer, nowMs);
        if (!answer.admitted) {
          if (judged.kind === 'limited') return judged;
          // The store's float arithmetic disagreed at the very edge: the store's word holds.
          return {
            kind: 'limited',
            refusal: {
              tenant: ask.tenant,
              reason: 'requests',
              limit: limits.requestsPerMinute ?? 0,
              used: Math.ceil(answer.requestsUsed),
              requested: 1,
              retryAfterMs: 1_000,
              figures: undefined,
            },
          };
        }
        return this.#sharedTicket(
          ask,
          ticket,
          days,
          limits.tokensPerMinute,
          judged.kind === 'admitted' ? judged.figures : undefined,
        );
      }
    }
    // Fallback: this replica's share of each limit, judged by its own ledger; its usage is tallied for the rejoin.
    const { decision, ticket } = this.#o.ledger.admit(ask, false, this.#o.gate.status().liveReplicas);
    if (decision.kind === 'limited') return decision;
    this.#tally.admitted(ask.tenant, this.#o.clock.now());
    let settled = false;
    return {
      kind: 'admitted',
      figures: decision.figures,
      settle: (outcome) => {
        if (settled) return;
        settled = true;
        ticket.settle(outcome);
        const used = usedTokens(ask, outcome);
        const nowMs = this.#o.clock.now();
        const days = this.#days(nowMs);
        this.#tally.settled(ask.tenant, nowMs, { day: days.days[1], startMs: days.startMs }, used.prompt + used.completion);
      },
    };
  }

  /**
   * Sends what the store has not counted yet (fallback batches, settles not confirmed) while it is
   * shared; each is dropped once the store confirms. One flush at a time; called at the rejoin and
   * at each renewal while anything is left.
   */
  async flush(): Promise<void> {
    if (this.#flushing || !this.#o.gate.shared() || (!this.#tally.pending() && this.#unsettled.size === 0)) return;
    this.#flushing = true;
    try {
      const nowMs = this.#o.clock.now();
      this.#seq += 1;
      const batches = this.#tally.take(nowMs, `${this.#o.replica}/${this.#run}/b${this.#seq}`);
      const counts = { tenants: 0, repeated: 0, tokens: 0, settles: 0, failed: 0 };
      await Promise.all([
        ...batches.map(async (b) => {
          const limits = this.#o.ledger.limitsOf(b.tenant);
          const rejoin = {
            ...b,
            requestsPerMinute: limits?.requestsPerMinute,
            tokensPerMinute: limits?.tokensPerMinute,
            ageMs: nowMs - b.sealedAtMs,
            graceMs: DAY_GRACE_MS,
          };
          const applied = await this.#o.store
            .rejoin(rejoin)
            .catch((error: unknown) => (this.#o.gate.storeFailed(error), undefined));
          if (applied === undefined) return void (counts.failed += 1);
          this.#tally.confirmed(b.tenant, b.id);
          if (applied) counts.tenants += 1;
          else counts.repeated += 1;
          for (const d of b.days) counts.tokens += applied ? d.tokens : 0;
        }),
        ...[...this.#unsettled].map(async ([ticket, done]) => {
          const applied = await this.#o.store
            .settle(done)
            .catch((error: unknown) => (this.#o.gate.storeFailed(error), undefined));
          if (applied === undefined) return void (counts.failed += 1);
          this.#unsettled.delete(ticket);
          if (applied) counts.settles += 1;
        }),
      ]);
      if (counts.tenants + counts.repeated + counts.settles > 0 || counts.failed > 0) {
        this.#o.logger.info(
          { replica: this.#o.replica, ...counts },
          counts.failed === 0
            ? 'tenant usage of the fallback added to the shared counters'
            : 'tenant usage of the fallback: some batches are kept for the next try',
        );
      }
    } finally {
      this.#flushing = false;
    }
  }

  /** How many fallback batches (one per tenant) and settles the store has not confirmed yet (/admin/runtime). */
  unconfirmedCount(): number {
    return this.#tally.pendingTenants() + this.#unsettled.size;
  }

  /** What the store has not confirmed yet (tests, reports): tokens of fallback batches, settles. */
  unconfirmed(tenant: string): { tokens: number; settles: number } {
    return {
      tokens: this.#tally.unconfirmedTokens(tenant),
      settles: [...this.#unsettled.values()].filter((d) => d.tenant === tenant).length,
    };
  }

  /** The candidate days around the store's time as last estimated. */
  #days(localMs: number): StoreDays {
    const { days, startMs } = dayCandidates(localMs + this.#offsetMs);
    return { days, startMs, graceMs: DAY_GRACE_MS };
  }

  #sharedTicket(
    ask: TenantAsk,
    ticket: string,
    admitted: StoreDays,
    tokensPerMinute: number | undefined,
    figures: Extract<TenantAdmission, { kind: 'admitted' }>['figures'],
  ): TenantAdmission {
    // Counted locally too (forced: the store already judged it).
    const local = this.#o.ledger.admit(ask, true).ticket;
    let open = this.#open.get(ask.tenant);
    if (open === undefined) {
      open = new Set();
      this.#open.set(ask.tenant, open);
    }
    open.add(ticket);
    let settled = false;
    return {
      kind: 'admitted',
      figures,
      settle: (outcome) => {
        if (settled) return;
        settled = true;
        local.settle(outcome);
        const tickets = this.#open.get(ask.tenant);
        tickets?.delete(ticket);
        if (tickets?.size === 0) this.#open.delete(ask.tenant);
        const used = usedTokens(ask, outcome);
        const done: SharedSettle = {
          tenant: ask.tenant,
          ticket,
          tokensPerMinute,
          used: used.prompt + used.completion,
          admitted,
          ended: this.#days(this.#o.clock.now()),
        };
        // In fallback it is kept for the rejoin; a settle whose answer is lost is kept too (it applies once).
        if (!this.#o.gate.shared()) return void this.#unsettled.set(ticket, done);
        this.#o.store.settle(done).catch((error: unknown) => {
          this.#unsettled.set(ticket, done);
          this.#o.gate.storeFailed(error);
        });
      },
    };
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = this.#o.clock.setTimeout(() => {
      const open = new Map([...this.#open].map(([tenant, tickets]) => [tenant, [...tickets]]));
      const renew =
        open.size === 0 || !this.#o.gate.shared()
          ? Promise.resolve()
          : this.#o.store.renewTickets(open).catch((error: unknown) => this.#o.gate.storeFailed(error));
      void renew.then(() => this.flush()).then(() => this.#schedule());
    }, this.#o.renewEveryMs);
  }
}

/**
 * Before the store was joined (start has not run, or did not get that far): the replica's own
 * ledger alone judges, limited tenants included.
 */
export function ledgerAlone(ledger: Pick<TenantLedger, 'admit'>, ask: TenantAsk, limited: boolean): TenantAdmission {
  const { decision, ticket } = ledger.admit(ask, !limited);
  return decision.kind === 'limited'
    ? decision
    : { kind: 'admitted', figures: decision.figures, settle: (outcome) => ticket.settle(outcome) };
}
