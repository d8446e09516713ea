// What each tenant used while this replica could not reach the shared store ([cluster] fallback),
// kept so the rejoin can add it to the shared counters exactly once. Per tenant: the requests and
// tokens of the last minute (the sliding estimate of minute-window.ts, for the shared per-minute
// buckets) and the tokens used per UTC day (the day by the store's clock as last estimated, for
// the shared day budget; settled answers only: a request still open is added when it settles).
//
// `take` seals each tenant's usage into a batch with an id; new usage goes on into a fresh entry.
// A sealed batch is given again, unchanged and under the same id, until `confirmed`: the store
// applies a batch id once (a retried rejoin whose first reply was lost never counts twice), and
// nothing is forgotten until the store said it has it. No I/O here.

import { countMinute, minuteEstimate, minuteWindow, type MinuteWindow } from './minute-window.ts';

export interface TallyDay {
  readonly day: string;
  /** When the day begins (epoch ms UTC): the store keeps its key an hour past its end. */
  readonly startMs: number;
  readonly tokens: number;
}

export interface TallyBatch {
  readonly tenant: string;
  readonly id: string;
  /** The fallback's requests and tokens of the minute before `sealedAtMs` (to add to the shared buckets). */
  readonly requests: number;
  readonly tokens: number;
  /** The replica's clock when sealed: a batch sent again later is drained by the time since. */
  readonly sealedAtMs: number;
  readonly days: readonly TallyDay[];
}

interface Entry {
  readonly minute: MinuteWindow;
  readonly days: Map<string, { startMs: number; tokens: number }>;
}

export class FallbackTally {
  readonly #open = new Map<string, Entry>();
  readonly #sealed = new Map<string, TallyBatch>();

  /** A request admitted in fallback (its request counts in the minute it was admitted). */
  admitted(tenant: string, localMs: number): void {
    countMinute(this.#entry(tenant, localMs).minute, localMs, 1, 0);
  }

  /** A request admitted in fallback ended having used `tokens`, on `day` (by the store's estimated clock). */
  settled(tenant: string, localMs: number, day: { readonly day: string; readonly startMs: number }, tokens: number): void {
    if (tokens <= 0) return;
    const entry = this.#entry(tenant, localMs);
    countMinute(entry.minute, localMs, 0, tokens);
    const known = entry.days.get(day.day);
    if (known === undefined) entry.days.set(day.day, { startMs: day.startMs, tokens });
    else known.tokens += tokens;
  }

  /**
   * The batches to send now: each tenant's sealed batch not yet confirmed, as it was; otherwise
   * its usage so far, sealed now under `id`. Nothing is dropped until `confirmed`.
   */
  take(localMs: number, id: string): TallyBatch[] {
    for (const [tenant, entry] of this.#open) {
      if (this.#sealed.has(tenant)) continue;
      this.#open.delete(tenant);
      const minute = minuteEstimate(entry.minute, localMs);
      const days = [...entry.days].map(([day, d]) => ({ day, startMs: d.startMs, tokens: d.tokens }));
      if (minute.requests === 0 && minute.tokens === 0 && days.length === 0) continue;
      this.#sealed.set(tenant, { tenant, id, requests: minute.requests, tokens: minute.tokens, sealedAtMs: localMs, days });
    }
    return [...this.#sealed.values()];
  }

  /** The store has applied `tenant`'s batch `id`: it is dropped. */
  confirmed(tenant: string, id: string): void {
    if (this.#sealed.get(tenant)?.id === id) this.#sealed.delete(tenant);
  }

  /** Whether anything is still to be sent (sealed or not). */
  pending(): boolean {
    return this.#open.size > 0 || this.#sealed.size > 0;
  }

  /** Tenants with usage not yet confirmed by the store. */
  pendingTenants(): number {
    return new Set([...this.#open.keys(), ...this.#sealed.keys()]).size;
  }

  /** The tokens per day not yet confirmed by the store, by tenant (for tests and reports). */
  unconfirmedTokens(tenant: string): number {
    let sum = 0;
    for (const d of this.#sealed.get(tenant)?.days ?? []) sum += d.tokens;
    for (const d of this.#open.get(tenant)?.days.values() ?? []) sum += d.tokens;
    return sum;
  }

  #entry(tenant: string, localMs: number): Entry {
    let entry = this.#open.get(tenant);
    if (entry === undefined) {
      entry = { minute: minuteWindow(localMs), days: new Map() };
      this.#open.set(tenant, entry);
    }
    return entry;
  }
}
