// Pure: the usage store's part of the detailed /health and /metrics — how the state file's writes
// go (src/state/state-writes.ts) and what of the counted usage the file lacks because they fail.
// A failing store makes /health "degraded" (tenants are still served, but a restart now would
// hand them back what the file lacks); a stale file found at start is shown, with what to do.

import type { StateWriteHealth } from '#src/state/index.ts';
import type { UnsavedUsage } from './usage-flusher.ts';

/** The `state` section of the detailed /health. */
export interface UsageStoreReport {
  readonly status: 'ok' | 'failing';
  readonly file: string;
  readonly reason: string | null;
  readonly failing_since: string | null;
  readonly failed_writes: number;
  readonly last_write_at: string | null;
  readonly last_write_seq: number;
  /** Usage counted and not in the file (kept in memory, retried). */
  readonly unsaved: { readonly rows: number; readonly requests: number; readonly tokens: number };
  /** Found at start: the file lacks writes a previous run made or tried; null = nothing found. */
  readonly stale: {
    readonly reason: string;
    readonly file_write: number;
    readonly mark_write: number;
    readonly advice: string;
  } | null;
  /** The write mark cannot be written (the next start cannot judge this run); null = it can. */
  readonly mark_problem: string | null;
}

export function usageStoreReport(writes: StateWriteHealth, unsaved: UnsavedUsage, staleAdvice: string): UsageStoreReport {
  return {
    status: writes.status === 'failing' || unsaved.rows > 0 ? 'failing' : 'ok',
    file: writes.file,
    reason: writes.reason,
    failing_since: writes.failingSince,
    failed_writes: writes.failures,
    last_write_at: writes.lastWriteAt,
    last_write_seq: writes.lastWriteSeq,
    unsaved: { rows: unsaved.rows, requests: unsaved.requests, tokens: unsaved.tokens },
    stale:
      writes.stale === null
        ? null
        : {
            reason: writes.stale.reason,
            file_write: writes.stale.fileSeq,
            mark_write: writes.stale.markSeq,
            advice: staleAdvice,
          },
    mark_problem: writes.markProblem,
  };
}

/** A failing store makes an ok fleet degraded in /health (tenants are served; a restart now would lose usage). */
export function storeDegrades(report: UsageStoreReport | undefined): boolean {
  return report?.status === 'failing';
}

/** The state store's part of the detailed /health (`state`); undefined = no state_dir. */
export function usageHealthPart(report: UsageStoreReport | undefined): { readonly state: UsageStoreReport } | undefined {
  return report === undefined ? undefined : { state: report };
}
