// Budgets across restarts, for one gateway: the usage store in [server] state_dir (opened before
// anything else is built, so a state file this build cannot use stops the start), today's rows
// handed back to the ledger (connect), and the flusher writing the ledger's rows every interval and
// once more at stop.
// Without a state_dir: nothing is stored, and a tenant with tokens_per_day gets a startup warning.

import type { Logger } from 'pino';
import type { Clock } from '#src/core/clock.ts';
import type { GatewayConfig } from '#src/config/types.ts';
import { openUsageStore, UsageFlusher, type SqliteUsageStore, type UsageRow } from '#src/tenants/index.ts';

/** What the ledger gives and takes (h23a's ledger: usageRows() and restore(rows)). */
export interface UsageLedgerSide {
  usageRows(): readonly UsageRow[];
  restore(rows: readonly UsageRow[]): void;
}

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
  constructor(config: GatewayConfig, deps: { readonly clock: Clock; readonly logger: Logger }) {
    const { clock, logger } = deps;
    this.#clock = clock;
    this.#logger = logger;
    const unstored = budgetsWithoutState(config);
    if (unstored.length > 0) {
      logger.warn({ tenants: unstored }, 'tokens_per_day budgets are kept in memory only: a restart resets them (set [server] state_dir to keep them)');
    }
    this.store = openUsageStore(config.server.stateDir, this.#log, clock);
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

  /** After the drain: the last write, then the file is closed. */
  stop(): void {
    this.#stopped = true;
    this.#flusher?.stop();
    this.store?.close();
  }

  readonly #log = (level: 'info' | 'warn' | 'error', fields: Record<string, unknown>, message: string): void => this.#logger[level](fields, message);
}
