// Writes the ledger's usage rows to the UsageStore every USAGE_FLUSH_INTERVAL_MS, on the main
// thread, one transaction per interval, and once more at stop (after the drain, so the last
// requests count). Only the rows that changed since the last write that succeeded are written, so
// an interval's transaction stays small however many tenants and models there are; a write that
// fails is logged and its rows are written with the next interval (each row holds the day's
// totals, so writing it late loses nothing).

import type { Clock, Timer } from '#src/core/clock.ts';
import type { StateLog } from '#src/state/index.ts';
import type { UsageRow, UsageStore } from './usage-rows.ts';

/**
 * How often usage is written. What a crash (kill -9, power cut) can lose: the usage counted since
 * the last write, at most this long (the file's commits are synchronous = FULL, src/state/state-db.ts).
 * The write is one transaction on the main thread: about 10 ms per 1,000 changed rows (measured on
 * a busy 2-core machine; rows that did not change cost only their comparison), so a fleet whose
 * every interval changes 10,000 tenant × model rows holds the main thread ~0.1 s every 10 s.
 */
export const USAGE_FLUSH_INTERVAL_MS = 10_000;

export interface UsageFlusherOptions {
  readonly store: Pick<UsageStore, 'save'>;
  /** The ledger's rows now (each the day's totals of one tenant × model × day). */
  readonly rows: () => readonly UsageRow[];
  readonly clock: Clock;
  readonly log: StateLog;
  readonly intervalMs?: number;
  /** After each write that succeeded: how many rows it wrote. */
  readonly onSaved?: (rows: number) => void;
}

const keyOf = (row: UsageRow): string => `${row.day}\u0000${row.tenant}\u0000${row.model}`;
const valueOf = (row: UsageRow): string => `${row.requests}/${row.promptTokens}/${row.completionTokens}`;

export class UsageFlusher {
  readonly #options: UsageFlusherOptions;
  readonly #intervalMs: number;
  /** What the store holds of each row the ledger had at the last write that succeeded. */
  #written = new Map<string, string>();
  #timer: Timer | undefined;
  #stopped = false;

  constructor(options: UsageFlusherOptions) {
    this.#options = options;
    this.#intervalMs = Math.max(1, options.intervalMs ?? USAGE_FLUSH_INTERVAL_MS);
  }

  start(): void {
    if (this.#stopped || this.#timer !== undefined) return;
    this.#schedule();
  }

  /** Rows the store already holds (restored at start): not written again until they change. */
  markWritten(rows: readonly UsageRow[]): void {
    for (const row of rows) this.#written.set(keyOf(row), valueOf(row));
  }

  /** Writes the rows that changed, in one transaction; false when the write failed (logged, retried next time). */
  flush(): boolean {
    let rows: readonly UsageRow[];
    try {
      rows = this.#options.rows();
    } catch (error) {
      this.#options.log('error', { err: error }, 'usage rows could not be read; nothing written this interval');
      return false;
    }
    const now = new Map<string, string>();
    const changed: UsageRow[] = [];
    for (const row of rows) {
      const key = keyOf(row);
      const value = valueOf(row);
      now.set(key, value);
      if (this.#written.get(key) !== value) changed.push(row);
    }
    try {
      if (changed.length > 0) this.#options.store.save(changed);
    } catch (error) {
      this.#options.log('error', { err: error, rows: changed.length }, 'usage could not be written to the state file; retrying with the next interval');
      return false;
    }
    // Rows the ledger no longer has (a past day) are forgotten here, and kept in the store.
    this.#written = now;
    if (changed.length > 0) this.#options.onSaved?.(changed.length);
    return true;
  }

  /** Stops the interval and writes once more (call after the drain). */
  stop(): boolean {
    if (this.#stopped) return true;
    this.#stopped = true;
    this.#timer?.cancel();
    this.#timer = undefined;
    return this.flush();
  }

  #schedule(): void {
    this.#timer = this.#options.clock.setTimeout(() => {
      this.#timer = undefined;
      if (this.#stopped) return;
      this.flush();
      this.#schedule();
    }, this.#intervalMs);
  }
}
