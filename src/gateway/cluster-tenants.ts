// [cluster]: tenant limits counted across replicas. A limited tenant's request is checked and
// reserved in the store in one atomic step (cluster/tenant-lua.ts); the verdict's description
// (429 figures, retry-after, x-ratelimit-*) is the tenants' own pure decision over the shared
// figures. The replica's own ledger still counts every request (usage rows, /admin/tenants).
// While the store is lost (the slot gate says so, logged once), each tenant's limits fall back to
// this replica's share: limit / live replicas, at least 1. Requests admitted in fallback are
// settled locally only, so nothing is given back to the store that it never counted.

import { randomBytes } from 'node:crypto';
import type { Clock, Timer } from '#src/core/clock.ts';
import type { ClusterGate, TenantStore } from '#src/cluster/index.ts';
import { decideAt, ledgerAdmission, msToNextDay, usedTokens, utcDay, type TenantAdmission, type TenantAsk, type TenantLedger } from '#src/tenants/index.ts';

/** A day's key is kept an hour past the day's end (a request still open at midnight settles into it). */
const DAY_GRACE_MS = 3_600_000;

export interface SharedTenantsOptions {
  readonly ledger: Pick<TenantLedger, 'admit' | 'limitsOf'>;
  readonly store: TenantStore;
  readonly gate: Pick<ClusterGate, 'shared' | 'storeFailed' | 'status'>;
  readonly clock: Clock;
  readonly replica: string;
  /** How often running requests are renewed in the store (three times per lease_ttl). */
  readonly renewEveryMs: number;
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

  constructor(options: SharedTenantsOptions) {
    this.#o = options;
    this.#local = ledgerAdmission(options.ledger);
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
      const day = utcDay(nowMs);
      const answer = await this.#o.store.reserve({ tenant: ask.tenant, ticket, limits, cost: ask.reserveTokens, day, dayTtlMs: msToNextDay(nowMs) + DAY_GRACE_MS, force: false }).catch((error: unknown) => {
        this.#o.gate.storeFailed(error);
        return undefined;
      });
      if (answer !== undefined) {
        const judged = decideAt(ask, limits, answer, nowMs);
        if (!answer.admitted) {
          if (judged.kind === 'limited') return judged;
          // The store's float arithmetic disagreed at the very edge: the store's word holds.
          return { kind: 'limited', refusal: { tenant: ask.tenant, reason: 'requests', limit: limits.requestsPerMinute ?? 0, used: Math.ceil(answer.requestsUsed), requested: 1, retryAfterMs: 1_000, figures: undefined } };
        }
        return this.#sharedTicket(ask, ticket, day, limits.tokensPerMinute, judged.kind === 'admitted' ? judged.figures : undefined);
      }
    }
    // Fallback: this replica's share of each limit, judged by its own ledger.
    const { decision, ticket } = this.#o.ledger.admit(ask, false, this.#o.gate.status().liveReplicas);
    if (decision.kind === 'limited') return decision;
    return { kind: 'admitted', figures: decision.figures, settle: (outcome) => ticket.settle(outcome) };
  }

  #sharedTicket(ask: TenantAsk, ticket: string, day: string, tokensPerMinute: number | undefined, figures: Extract<TenantAdmission, { kind: 'admitted' }>['figures']): TenantAdmission {
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
        const nowMs = this.#o.clock.now();
        const done = { tenant: ask.tenant, ticket, tokensPerMinute, reserved: ask.reserveTokens, used: used.prompt + used.completion, admittedDay: day, today: utcDay(nowMs), todayTtlMs: msToNextDay(nowMs) + DAY_GRACE_MS };
        this.#o.store.settle(done).catch((error: unknown) => this.#o.gate.storeFailed(error));
      },
    };
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = this.#o.clock.setTimeout(() => {
      const open = new Map([...this.#open].map(([tenant, tickets]) => [tenant, [...tickets]]));
      const renew = open.size === 0 || !this.#o.gate.shared() ? Promise.resolve() : this.#o.store.renewTickets(open).catch((error: unknown) => this.#o.gate.storeFailed(error));
      void renew.then(() => this.#schedule());
    }, this.#o.renewEveryMs);
  }
}
