// The embedded UsageStore: tenants' usage per tenant × model × UTC day in the state file's
// tenant_usage table (src/state/schema.ts). save() upserts its rows in one transaction; rows of days
// older than USAGE_RETENTION_DAYS are deleted, at most once per UTC day, in the same transaction as
// the first save of the day. A row the store cannot take is skipped and reported, never allowed to
// cost the other rows their write.

import { systemClock, type Clock } from '#src/core/clock.ts';
import { openStateDb, type StateDb, type StateLog, type StateWriteFaults, type StateWriteHealth } from '#src/state/index.ts';
import type { StatementSync } from 'node:sqlite';
import type { UsageRow, UsageStore } from './usage-rows.ts';
import { utcDay } from './limits.ts';

/**
 * Days of usage kept: today and the 39 before it (a month's report with room to spare; about
 * 40 × tenants × models small rows). Only today's rows are read back (tokens_per_day); the rest are
 * for the operator's own queries.
 */
export const USAGE_RETENTION_DAYS = 40;

const DAY_MS = 86_400_000;
const DAY_RULE = /^\d{4}-\d{2}-\d{2}$/;

/** Pure: why the store cannot take `row`, or undefined when it can. */
export function usageRowProblem(row: UsageRow): string | undefined {
  if (typeof row.tenant !== 'string' || row.tenant === '') return 'tenant must be a non-empty string';
  if (typeof row.model !== 'string' || row.model === '') return 'model must be a non-empty string';
  if (typeof row.day !== 'string' || !DAY_RULE.test(row.day) || utcDay(Date.parse(`${row.day}T00:00:00Z`) || 0) !== row.day)
    return `day must be a UTC day "YYYY-MM-DD", not ${JSON.stringify(row.day)}`;
  for (const field of ['requests', 'promptTokens', 'completionTokens'] as const) {
    const value = row[field];
    if (!Number.isSafeInteger(value) || value < 0) return `${field} must be a whole number ≥ 0, not ${String(value)}`;
  }
  return undefined;
}

/** Pure: the oldest day kept when today is `today` (days before it are deleted). */
export function oldestKeptDay(today: string, retentionDays = USAGE_RETENTION_DAYS): string {
  return utcDay(Date.parse(`${today}T00:00:00Z`) - (retentionDays - 1) * DAY_MS);
}

export interface SqliteUsageStoreOptions {
  readonly clock?: Clock;
  readonly retentionDays?: number;
  /** A row save() skipped, and why (logged by openUsageStore). */
  readonly onInvalid?: (row: UsageRow, problem: string) => void;
}

export class SqliteUsageStore implements UsageStore {
  readonly #db: StateDb;
  readonly #clock: Clock;
  readonly #retentionDays: number;
  readonly #onInvalid: (row: UsageRow, problem: string) => void;
  readonly #select: StatementSync;
  readonly #upsert: StatementSync;
  readonly #prune: StatementSync;
  /** The UTC day retention last ran on (once per day at most). */
  #prunedOn: string | undefined;

  constructor(db: StateDb, options: SqliteUsageStoreOptions = {}) {
    this.#db = db;
    this.#clock = options.clock ?? systemClock;
    this.#retentionDays = Math.max(1, options.retentionDays ?? USAGE_RETENTION_DAYS);
    this.#onInvalid = options.onInvalid ?? (() => undefined);
    this.#select = db.prepare(
      'SELECT tenant, model, requests, prompt_tokens, completion_tokens FROM tenant_usage WHERE day = ? ORDER BY tenant, model',
    );
    this.#upsert = db.prepare(
      `INSERT INTO tenant_usage (day, tenant, model, requests, prompt_tokens, completion_tokens) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (day, tenant, model) DO UPDATE SET requests = excluded.requests, prompt_tokens = excluded.prompt_tokens, completion_tokens = excluded.completion_tokens`,
    );
    this.#prune = db.prepare('DELETE FROM tenant_usage WHERE day < ?');
  }

  /** The state file's path. */
  get file(): string {
    return this.#db.file;
  }

  /** How the file's writes are going (a failure now and why, what the start found). */
  writes(): StateWriteHealth {
    return this.#db.writes();
  }

  load(day: string): readonly UsageRow[] {
    if (!DAY_RULE.test(day)) throw new Error(`usage store: a day is "YYYY-MM-DD", not ${JSON.stringify(day)}`);
    return this.#select.all(day).map((r) => ({
      tenant: String(r.tenant),
      model: String(r.model),
      day,
      requests: Number(r.requests),
      promptTokens: Number(r.prompt_tokens),
      completionTokens: Number(r.completion_tokens),
    }));
  }

  /** Today's rows (by the store's clock): what the ledger restores at start. */
  loadToday(): readonly UsageRow[] {
    return this.load(utcDay(this.#clock.now()));
  }

  save(rows: readonly UsageRow[]): void {
    const valid = rows.filter((row) => {
      const problem = usageRowProblem(row);
      if (problem !== undefined) this.#onInvalid(row, problem);
      return problem === undefined;
    });
    const today = utcDay(this.#clock.now());
    const prune = this.#prunedOn !== today;
    if (valid.length === 0 && !prune) return;
    this.#db.transaction(() => {
      for (const row of valid)
        this.#upsert.run(row.day, row.tenant, row.model, row.requests, row.promptTokens, row.completionTokens);
      if (prune) this.#prune.run(oldestKeptDay(today, this.#retentionDays));
    });
    // Only once the transaction committed: a failed one prunes again with the next save.
    if (prune) this.#prunedOn = today;
  }

  close(): void {
    this.#db.close();
  }
}

/**
 * The composition root's way in: the usage store in `<stateDir>/switchyard.sqlite`, or undefined
 * without a state_dir (usage is then kept in memory only). Throws a StateFileError when the file
 * cannot be used (the gateway must not start: docs/tenants.md, "Budgets across restarts").
 */
export function openUsageStore(
  stateDir: string | undefined,
  log: StateLog,
  clock: Clock = systemClock,
  faults?: StateWriteFaults,
): SqliteUsageStore | undefined {
  if (stateDir === undefined) return undefined;
  const db = openStateDb(stateDir, { log, clock, ...(faults === undefined ? {} : { faults }) });
  return new SqliteUsageStore(db, {
    clock,
    onInvalid: (row, problem) =>
      log('error', { tenant: row.tenant, model: row.model, day: row.day, problem }, 'usage row not stored'),
  });
}
