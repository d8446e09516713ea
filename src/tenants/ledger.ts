// The limits ledger: one instance for the whole gateway (the owner thread's), holding per tenant
// its requests in flight, its two per-minute buckets, and the UTC day's usage per model. Every
// admission of every request worker is judged here (limits.ts decides), so limits hold exactly
// with `[server] workers > 1`. A reload keeps every counter by tenant name: changed limits apply
// at once, a removed tenant's counters go. usageRows()/restore() are what a UsageStore saves and
// loads (the day's budget survives a restart).

import type { TenantSpec } from '#src/tenants/tenants-config.ts';
import type { TenantAsk, TenantDecision, TenantOutcome } from './admission-types.ts';
import { charged, rateFigures, usedAt, utcDay, DAY_MS, msToNextDay, type Meter, type TenantLimits } from './limits.ts';
import type { UsageRow } from './usage-rows.ts';
import { countMinute, minuteEstimate, minuteWindow, type MinuteWindow } from './minute-window.ts';
import { decideAt, limitsShare } from './shared-verdict.ts';

interface DayUsage {
  requests: number;
  promptTokens: number;
  completionTokens: number;
}

interface TenantState {
  readonly name: string;
  limits: TenantLimits;
  inFlight: number;
  requestsMeter: Meter;
  tokensMeter: Meter;
  /** Tokens reserved by requests still open (the day's budget counts them). */
  reserved: number;
  day: string;
  /** When `day` began and ends (epoch ms): the day's string is made only when it changes. */
  dayStartMs: number;
  dayEndMs: number;
  /** Prompt + completion tokens of `day`, over every model. */
  dayTokens: number;
  readonly byModel: Map<string, DayUsage>;
  readonly dirty: Set<string>;
  readonly minute: MinuteWindow;
}

/** An admitted request's hold on the ledger, settled once. */
export interface LedgerTicket {
  settle(outcome: TenantOutcome): void;
}

const NO_LIMITS: TenantLimits = {
  maxConcurrent: undefined,
  requestsPerMinute: undefined,
  tokensPerMinute: undefined,
  tokensPerDay: undefined,
};
const NOOP_TICKET: LedgerTicket = { settle: () => {} };

export interface TenantFigures {
  readonly inFlight: number;
  readonly minute: { readonly requests: number; readonly tokens: number };
  readonly today: { readonly requests: number; readonly promptTokens: number; readonly completionTokens: number };
  readonly remaining: { readonly requests: number | null; readonly tokens: number | null; readonly budget: number | null };
}

export class TenantLedger {
  readonly #now: () => number;
  readonly #states = new Map<string, TenantState>();
  /** Rows of a day that ended with changes not yet handed over. */
  #ended: UsageRow[] = [];

  constructor(now: () => number, tenants: readonly TenantSpec[] = []) {
    this.#now = now;
    this.configure(tenants);
  }

  /** The tenants in force (start, reload): counters kept by name, new limits at once, removed tenants' counters dropped. */
  configure(tenants: readonly TenantSpec[]): void {
    const names = new Set(tenants.map((t) => t.name));
    for (const name of [...this.#states.keys()]) if (!names.has(name)) this.#states.delete(name);
    const nowMs = this.#now();
    for (const spec of tenants) {
      const limits = limitsOf(spec);
      const state = this.#states.get(spec.name);
      if (state === undefined) this.#states.set(spec.name, freshState(spec.name, limits, nowMs));
      else state.limits = limits;
    }
  }

  /**
   * Judges one request against its tenant's limits and, if admitted, holds its reservation until
   * settled. `force`: admitted whatever the limits (a worker that saw no limits did not wait for
   * the answer; it is still counted). A tenant the ledger does not know (removed by a reload in
   * between) is admitted and not counted. `liveReplicas` > 1: judged by this replica's share of
   * each limit ([cluster] without its store: limits.ts's limit / live replicas, at least 1).
   */
  admit(ask: TenantAsk, force = false, liveReplicas = 1): { decision: TenantDecision; ticket: LedgerTicket } {
    const state = this.#states.get(ask.tenant);
    if (state === undefined) return { decision: { kind: 'admitted', figures: undefined }, ticket: NOOP_TICKET };
    const nowMs = this.#now();
    this.#roll(state, nowMs);
    const { limits } = state;
    const requestsUsed =
      limits.requestsPerMinute === undefined ? 0 : usedAt(state.requestsMeter, limits.requestsPerMinute, nowMs);
    const tokensUsed = limits.tokensPerMinute === undefined ? 0 : usedAt(state.tokensMeter, limits.tokensPerMinute, nowMs);
    const cost = ask.reserveTokens;
    if (!force) {
      const judged = decideAt(
        ask,
        limitsShare(limits, liveReplicas),
        { inFlight: state.inFlight, requestsUsed, tokensUsed, todayTokens: state.dayTokens + state.reserved },
        nowMs,
      );
      if (judged.kind === 'limited') return { decision: judged, ticket: NOOP_TICKET };
    }
    state.inFlight += 1;
    state.reserved += cost;
    state.requestsMeter = charged(state.requestsMeter, limits.requestsPerMinute, 1, nowMs);
    state.tokensMeter = charged(state.tokensMeter, limits.tokensPerMinute, cost, nowMs);
    countMinute(state.minute, nowMs, 1, cost);
    const row = this.#row(state, ask.model);
    row.requests += 1;
    state.dirty.add(ask.model);
    const figures = rateFigures(limits, requestsUsed + 1, tokensUsed + cost);
    let settled = false;
    const ticket: LedgerTicket = {
      settle: (outcome) => {
        if (settled) return;
        settled = true;
        this.#settle(ask, state, outcome);
      },
    };
    return { decision: { kind: 'admitted', figures }, ticket };
  }

  #settle(ask: TenantAsk, admittedAs: TenantState, outcome: TenantOutcome): void {
    // A reload may have removed the tenant meanwhile (its counters went with it).
    const state = this.#states.get(ask.tenant);
    if (state !== admittedAs || state === undefined) return;
    const nowMs = this.#now();
    this.#roll(state, nowMs);
    state.inFlight = Math.max(0, state.inFlight - 1);
    state.reserved = Math.max(0, state.reserved - ask.reserveTokens);
    const used = usedTokens(ask, outcome);
    const difference = used.prompt + used.completion - ask.reserveTokens;
    state.tokensMeter = charged(state.tokensMeter, state.limits.tokensPerMinute, difference, nowMs);
    countMinute(state.minute, nowMs, 0, difference);
    const row = this.#row(state, ask.model);
    row.promptTokens += used.prompt;
    row.completionTokens += used.completion;
    state.dayTokens += used.prompt + used.completion;
    state.dirty.add(ask.model);
  }

  /** The limits in force for `tenant`; undefined = not a tenant. */
  limitsOf(tenant: string): TenantLimits | undefined {
    return this.#states.get(tenant)?.limits;
  }

  /** The tenant's figures now, for /admin/tenants; undefined = not a tenant. */
  figures(tenant: string): TenantFigures | undefined {
    const state = this.#states.get(tenant);
    if (state === undefined) return undefined;
    const nowMs = this.#now();
    this.#roll(state, nowMs);
    const { limits } = state;
    const today = { requests: 0, promptTokens: 0, completionTokens: 0 };
    for (const usage of state.byModel.values()) {
      today.requests += usage.requests;
      today.promptTokens += usage.promptTokens;
      today.completionTokens += usage.completionTokens;
    }
    const rpm = limits.requestsPerMinute;
    const tpm = limits.tokensPerMinute;
    const tpd = limits.tokensPerDay;
    return {
      inFlight: state.inFlight,
      minute: minuteEstimate(state.minute, nowMs),
      today,
      remaining: {
        requests: rpm === undefined ? null : Math.max(0, Math.floor(rpm - usedAt(state.requestsMeter, rpm, nowMs))),
        tokens: tpm === undefined ? null : Math.max(0, Math.floor(tpm - usedAt(state.tokensMeter, tpm, nowMs))),
        budget: tpd === undefined ? null : Math.max(0, tpd - state.dayTokens - state.reserved),
      },
    };
  }

  /** Requests in flight per tenant (queued ones included). */
  inFlight(): Map<string, number> {
    return new Map([...this.#states].map(([name, state]) => [name, state.inFlight]));
  }

  /** The day's rows changed since the last call (and a finished day's last changes), for a UsageStore. */
  usageRows(): UsageRow[] {
    const nowMs = this.#now();
    const rows = this.#ended;
    this.#ended = [];
    for (const state of this.#states.values()) {
      this.#roll(state, nowMs);
      for (const model of state.dirty) rows.push(rowOf(state.name, model, state.day, state.byModel.get(model)));
      state.dirty.clear();
    }
    return rows;
  }

  /** Today's rows from a UsageStore (at start): the day's counts as they were saved. Other days and unknown tenants are skipped. */
  restore(rows: readonly UsageRow[]): void {
    const nowMs = this.#now();
    for (const row of rows) {
      const state = this.#states.get(row.tenant);
      if (state === undefined) continue;
      this.#roll(state, nowMs);
      if (row.day !== state.day) continue;
      const usage = this.#row(state, row.model);
      state.dayTokens += row.promptTokens + row.completionTokens - usage.promptTokens - usage.completionTokens;
      usage.requests = row.requests;
      usage.promptTokens = row.promptTokens;
      usage.completionTokens = row.completionTokens;
    }
  }

  #row(state: TenantState, model: string): DayUsage {
    let usage = state.byModel.get(model);
    if (usage === undefined) {
      usage = { requests: 0, promptTokens: 0, completionTokens: 0 };
      state.byModel.set(model, usage);
    }
    return usage;
  }

  /** A new UTC day: the budget starts over (the ended day's unsaved rows are kept for usageRows). */
  #roll(state: TenantState, nowMs: number): void {
    if (nowMs >= state.dayStartMs && nowMs < state.dayEndMs) return;
    const day = utcDay(nowMs);
    state.dayStartMs = nowMs - (DAY_MS - msToNextDay(nowMs));
    state.dayEndMs = nowMs + msToNextDay(nowMs);
    if (day === state.day) return;
    for (const model of state.dirty) this.#ended.push(rowOf(state.name, model, state.day, state.byModel.get(model)));
    state.dirty.clear();
    state.byModel.clear();
    state.dayTokens = 0;
    state.day = day;
  }
}

function limitsOf(spec: TenantSpec): TenantLimits {
  if (
    spec.maxConcurrent === undefined &&
    spec.requestsPerMinute === undefined &&
    spec.tokensPerMinute === undefined &&
    spec.tokensPerDay === undefined
  )
    return NO_LIMITS;
  return {
    maxConcurrent: spec.maxConcurrent,
    requestsPerMinute: spec.requestsPerMinute,
    tokensPerMinute: spec.tokensPerMinute,
    tokensPerDay: spec.tokensPerDay,
  };
}

function freshState(name: string, limits: TenantLimits, nowMs: number): TenantState {
  return {
    name,
    limits,
    inFlight: 0,
    requestsMeter: { used: 0, atMs: nowMs },
    tokensMeter: { used: 0, atMs: nowMs },
    reserved: 0,
    day: utcDay(nowMs),
    dayStartMs: nowMs - (DAY_MS - msToNextDay(nowMs)),
    dayEndMs: nowMs + msToNextDay(nowMs),
    dayTokens: 0,
    byModel: new Map(),
    dirty: new Set(),
    minute: minuteWindow(nowMs),
  };
}

/** Pure: the tokens a settled request is charged: its usage; the reservation when served without one; nothing when not served. */
export function usedTokens(
  ask: Pick<TenantAsk, 'promptTokens' | 'reserveTokens'>,
  outcome: TenantOutcome,
): { prompt: number; completion: number } {
  if (!outcome.served) return { prompt: 0, completion: 0 };
  const estimate = Math.min(ask.promptTokens, ask.reserveTokens);
  if (outcome.promptTokens === undefined && outcome.completionTokens === undefined)
    return { prompt: estimate, completion: ask.reserveTokens - estimate };
  return { prompt: outcome.promptTokens ?? estimate, completion: outcome.completionTokens ?? 0 };
}

function rowOf(tenant: string, model: string, day: string, usage: DayUsage | undefined): UsageRow {
  return {
    tenant,
    model,
    day,
    requests: usage?.requests ?? 0,
    promptTokens: usage?.promptTokens ?? 0,
    completionTokens: usage?.completionTokens ?? 0,
  };
}
