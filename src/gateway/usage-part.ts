// Budgets across restarts, for one gateway: the usage store in [server] state_dir (opened before
// anything else starts, so a state file this build cannot use stops the start), today's rows handed
// back to the ledger, and the flusher writing the ledger's rows every interval and once more at stop.
// Without a state_dir: nothing is stored, and a tenant with tokens_per_day gets a startup warning.

import type { Logger } from 'pino';
import type { Clock } from '#src/core/clock.ts';
import type { GatewayConfig } from '#src/config/types.ts';
import { openUsageStore, UsageFlusher, utcDay, type UsageRow, type UsageStore } from '#src/tenants/index.ts';

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
  readonly store: UsageStore | undefined;
  readonly #flusher: UsageFlusher | undefined;

  /** Opens the store (throws a StateFileError naming the file when it cannot be used). */
  constructor(config: GatewayConfig, deps: { readonly clock: Clock; readonly logger: Logger; readonly ledger: UsageLedgerSide | undefined }) {
    const { clock, logger, ledger } = deps;
    const unstored = budgetsWithoutState(config);
    if (unstored.length > 0) {
      logger.warn({ tenants: unstored }, 'tokens_per_day budgets are kept in memory only: a restart resets them (set [server] state_dir to keep them)');
    }
    const store = openUsageStore(config.server.stateDir, (level, fields, message) => logger[level](fields, message), clock);
    this.store = store;
    if (store === undefined || ledger === undefined) return;
    const today = store.load(utcDay(clock.now()));
    ledger.restore(today);
    logger.info({ file: store.file, rows: today.length }, 'tenant usage of today restored from the state file');
    this.#flusher = new UsageFlusher({ store, rows: () => ledger.usageRows(), clock, log: (level, fields, message) => logger[level](fields, message) });
    this.#flusher.markWritten(today);
  }

  start(): void {
    this.#flusher?.start();
  }

  /** After the drain: the last write, then the file is closed. */
  stop(): void {
    this.#flusher?.stop();
    this.store?.close();
  }
}
