// Budgets across restarts, for one gateway: the usage store in [server] state_dir (opened before
// anything else is built, so a state file this build cannot use stops the start), today's rows
// handed back to the ledger (connect), and the flusher writing the ledger's rows every interval and
// once more at stop. While writes fail the counts stay in memory and are retried (usage-flusher.ts);
// /health and /metrics show it (health()); a stop that still cannot write them says so, naming
// the file and the cause, and answers `saved: false` (`switchyard serve` then exits non-zero).
// Without a state_dir: nothing is stored, and a tenant with tokens_per_day gets a startup warning.

import type { Logger } from 'pino';
import { sleep, type Clock } from '#src/core/clock.ts';
import type { GatewayConfig } from '#src/config/types.ts';
import { STALE_ADVICE, type StateWriteFaults } from '#src/state/index.ts';
import { openUsageStore, type SqliteUsageStore } from './usage-store.ts';
import { UsageFlusher } from './usage-flusher.ts';
import { usageStoreReport, type UsageStoreReport } from './usage-health.ts';
import type { UsageRow } from './usage-rows.ts';

/** What the ledger gives and takes (h23a's ledger: usageRows() and restore(rows)). */
export interface UsageLedgerSide {
  usageRows(): readonly UsageRow[];
  restore(rows: readonly UsageRow[]): void;
}

/** How the last write at stop went: saved (or nothing to save), or what the file lacks and why. */
export type UsageStopOutcome =
  | { readonly saved: true }
  | { readonly saved: false; readonly file: string; readonly reason: string; readonly rows: number; readonly tokens: number };

/** The pauses before the stop's second and third tries of the last write (bounded: the stop waits at most their sum). */
export const STOP_RETRY_WAITS_MS: readonly number[] = Object.freeze([250, 1_000]);

/** Pure: the tenants whose tokens_per_day a restart forgets (no state_dir). */
export function budgetsWithoutState(config: GatewayConfig): readonly string[] {
  if (config.server.stateDir !== undefined) return [];
  return config.tenants.filter((t) => t.tokensPerDay !== undefined).map((t) => t.name);
}

export class UsagePart {
  readonly store: SqliteUsageStore | undefined;
  readonly #clock: Clock;
  readonly #logger: Logger;
  #flusher: UsageFlusher | undefined;
  #stopped = false;

  /** Opens the store (throws a StateFileError naming the file when it cannot be used). */
  constructor(
    config: GatewayConfig,
    deps: { readonly clock: Clock; readonly logger: Logger; readonly faults?: StateWriteFaults | undefined },
  ) {
    const { clock, logger } = deps;
    this.#clock = clock;
    this.#logger = logger;
    const unstored = budgetsWithoutState(config);
    if (unstored.length > 0) {
      logger.warn(
        { tenants: unstored },
        'tokens_per_day budgets are kept in memory only: a restart resets them (set [server] state_dir to keep them)',
      );
    }
    this.store = openUsageStore(config.server.stateDir, this.#log, clock, deps.faults);
  }

  /**
   * Hands today's stored rows to the ledger and writes its rows from now on (every interval once
   * start() ran, and at stop). Call it as soon as the ledger exists, before anything is admitted.
   */
  connect(ledger: UsageLedgerSide): void {
    const store = this.store;
    if (store === undefined || this.#flusher !== undefined || this.#stopped) return;
    const today = store.loadToday();
    ledger.restore(today);
    this.#logger.info({ file: store.file, rows: today.length }, 'tenant usage of today restored from the state file');
    this.#flusher = new UsageFlusher({
      store,
      rows: () => ledger.usageRows(),
      clock: this.#clock,
      log: this.#log,
      onSaved: (rows) => this.#logger.debug({ file: store.file, rows }, 'tenant usage written to the state file'),
    });
    this.#flusher.markWritten(today);
  }

  start(): void {
    this.#flusher?.start();
  }

  /** The state file's part of /health and /metrics; undefined without a state_dir. */
  health(): UsageStoreReport | undefined {
    const store = this.store;
    if (store === undefined) return undefined;
    return usageStoreReport(store.writes(), this.#flusher?.unsaved() ?? { rows: 0, requests: 0, tokens: 0 }, STALE_ADVICE);
  }

  /**
   * After the drain: the last write (tried again after each of STOP_RETRY_WAITS_MS when it
   * fails), then the file is closed. A write that never succeeds is an error log naming the file,
   * the cause and what is lost, and `saved: false`.
   */
  async stop(): Promise<UsageStopOutcome> {
    if (this.#stopped) return { saved: true };
    this.#stopped = true;
    const flusher = this.#flusher;
    const store = this.store;
    if (flusher === undefined || store === undefined) {
      store?.close();
      return { saved: true };
    }
    let saved = flusher.stop();
    for (const waitMs of STOP_RETRY_WAITS_MS) {
      if (saved) break;
      await sleep(this.#clock, waitMs);
      saved = flusher.flush();
    }
    const unsaved = flusher.unsaved();
    const reason = store.writes().reason ?? 'unknown';
    store.close();
    if (saved) return { saved: true };
    this.#logger.error(
      {
        file: store.file,
        reason,
        rows: unsaved.rows,
        unsaved_requests: unsaved.requests,
        unsaved_tokens: unsaved.tokens,
        tries: STOP_RETRY_WAITS_MS.length + 1,
      },
      `stopping without saving tenant usage: the state file ${store.file} cannot be written (${reason}); ${unsaved.tokens} tokens in ${unsaved.rows} rows counted since its last write are lost, and the next start will flag the file as stale`,
    );
    return { saved: false, file: store.file, reason, rows: unsaved.rows, tokens: unsaved.tokens };
  }

  readonly #log = (level: 'info' | 'warn' | 'error', fields: Record<string, unknown>, message: string): void =>
    this.#logger[level](fields, message);
}
