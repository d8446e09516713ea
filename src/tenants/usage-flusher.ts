// Writes the ledger's usage rows to the UsageStore every USAGE_FLUSH_INTERVAL_MS, on the main
// thread, one transaction per interval, and once more at stop (after the drain, so the last
// requests count). Only the rows that changed since the last write that succeeded are written, so
// an interval's transaction stays small however many tenants and models there are. A write that
// fails (a full disk) is logged and its rows are kept in memory, merged with what the ledger hands
// over next (each row holds the day's totals, so the newer row of a key holds the older one's
// counts and writing it late loses nothing), and retried sooner than the interval: after
// RETRY_FIRST_MS, doubling, never later than the interval. The ledger may hand over every row each
// time, or only the rows changed since its last call: both are written the same.

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

/** The first retry after a failed write; each further failure doubles it, up to the interval. */
export const RETRY_FIRST_MS = 1_000;

/** Pure: how long after the `failures`-th failed write in a row the next one is tried. */
export function retryDelayMs(failures: number, intervalMs: number): number {
  if (failures <= 0) return intervalMs;
  return Math.min(intervalMs, RETRY_FIRST_MS * 2 ** Math.min(failures - 1, 30));
}

/** What the store lacks of the counts the flusher was handed: rows a failed write left, and their tokens beyond what the store holds. */
export interface UnsavedUsage {
  readonly rows: number;
  readonly requests: number;
  readonly tokens: number;
}

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
const sameCounts = (a: UsageRow | undefined, b: UsageRow): boolean =>
  a !== undefined && a.requests === b.requests && a.promptTokens === b.promptTokens && a.completionTokens === b.completionTokens;

export class UsageFlusher {
  readonly #options: UsageFlusherOptions;
  readonly #intervalMs: number;
  /** What the store holds of each row the ledger had at the last write that succeeded. */
  #written = new Map<string, UsageRow>();
  /**
   * Rows a failed write did not store, written with the next one: a ledger that hands over only
   * the rows changed since its last call (TenantLedger.usageRows) does not hand them over again.
   */
  #unsaved = new Map<string, UsageRow>();
  #timer: Timer | undefined;
  #stopped = false;
  /** Writes failed in a row (0 after one that succeeded). */
  #failures = 0;

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
    for (const row of rows) this.#written.set(keyOf(row), row);
  }

  /** What the store lacks because writes failed (nothing while they work). */
  unsaved(): UnsavedUsage {
    let requests = 0;
    let tokens = 0;
    for (const [key, row] of this.#unsaved) {
      const stored = this.#written.get(key);
      requests += row.requests - (stored?.requests ?? 0);
      tokens +=
        row.promptTokens + row.completionTokens - (stored === undefined ? 0 : stored.promptTokens + stored.completionTokens);
    }
    return { rows: this.#unsaved.size, requests, tokens };
  }

  /** Writes the rows that changed, in one transaction; false when the write failed (logged, retried with backoff). */
  flush(): boolean {
    let rows: readonly UsageRow[];
    try {
      rows = this.#options.rows();
    } catch (error) {
      this.#options.log('error', { err: error }, 'usage rows could not be read; nothing written this interval');
      return false;
    }
    // What a failed write left, then this call's rows (a newer row of the same key replaces it).
    const batch = new Map(this.#unsaved);
    for (const row of rows) batch.set(keyOf(row), row);
    const changed = [...batch.values()].filter((row) => !sameCounts(this.#written.get(keyOf(row)), row));
    try {
      if (changed.length > 0) this.#options.store.save(changed);
    } catch (error) {
      this.#unsaved = new Map(changed.map((row) => [keyOf(row), row]));
      this.#failures += 1;
      const unsaved = this.unsaved();
      const retryMs = retryDelayMs(this.#failures, this.#intervalMs);
      this.#options.log(
        'error',
        { err: error, rows: unsaved.rows, unsaved_tokens: unsaved.tokens, failures: this.#failures, retry_in_ms: retryMs },
        `usage could not be written to the state file; kept in memory, retrying in ${retryMs / 1000} s`,
      );
      return false;
    }
    this.#unsaved = new Map();
    this.#failures = 0;
    // Rows the ledger no longer hands over (a past day) are forgotten here, and kept in the store.
    this.#written = new Map(batch);
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
    this.#timer = this.#options.clock.setTimeout(
      () => {
        this.#timer = undefined;
        if (this.#stopped) return;
        this.flush();
        this.#schedule();
      },
      retryDelayMs(this.#failures, this.#intervalMs),
    );
  }
}
