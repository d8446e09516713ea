// `[batch]`: the bounds of the Files and Batch API (docs/batch.md). The API is served wherever
// `[server] state_dir` is set, with these defaults; the table may change them or turn it off. The
// table's schema, types and defaults are this feature's own (batch-table.ts is its config table: the
// loader checks it and keeps it as written); this file reads it into the settings, at start and on
// every reload.

import { z } from 'zod';
import { table, positiveDurationMs, positiveSizeBytes, wholeAtLeastOne } from '#src/config/schema-parts.ts';

export interface BatchSettings {
  /** false = the API answers that batches are turned off, and no job runs. */
  readonly enabled: boolean;
  /** The largest input file taken, in bytes (a larger upload is refused 413 as it streams). */
  readonly maxFileBytes: number;
  /** The most lines one input file may hold. */
  readonly maxLines: number;
  /** The longest one line may be, in bytes. */
  readonly maxLineBytes: number;
  /** The most bytes of all of a tenant's files together. */
  readonly maxTenantBytes: number;
  /** How long files (inputs and outputs) and finished jobs are kept. */
  readonly retentionMs: number;
  /** The most lines of all jobs in flight at once (the pacing keeps it lower while the fleet is busy). */
  readonly maxInFlight: number;
  /** The longest answer of one line kept, in bytes. */
  readonly maxAnswerBytes: number;
  /** How often the runner looks for room in the fleet (and for expired windows). */
  readonly tickMs: number;
  /**
   * The slots counted for a node whose slots the gateway does not know (vLLM, SGLang: no capacity
   * figures; the gateway does not queue for it): at most this many of its requests in flight — the
   * batch's lines among them — before the batch adds none (pace.ts).
   */
  readonly unknownNodeSlots: number;
  /** Where the files are kept; absent = `<state_dir>/batch-files` (a shared directory for replicas). */
  readonly filesDir: string | undefined;
  /**
   * With [cluster]: the directory every replica shares (docs/batch.md, "Replicas"): the records
   * (`batch.sqlite`) and, unless files_dir is set, the files (`files/`); one replica at a time runs
   * the jobs (the cluster's lease). Absent = each gateway keeps its own in its state_dir.
   */
  readonly sharedDir: string | undefined;
}

export const BATCH_DEFAULTS: BatchSettings = Object.freeze({
  enabled: true,
  maxFileBytes: 200 * 1024 * 1024,
  maxLines: 50_000,
  maxLineBytes: 1024 * 1024,
  maxTenantBytes: 2 * 1024 * 1024 * 1024,
  retentionMs: 30 * 86_400_000,
  maxInFlight: 64,
  maxAnswerBytes: 16 * 1024 * 1024,
  tickMs: 100,
  unknownNodeSlots: 4,
  filesDir: undefined,
  sharedDir: undefined,
});

/** `[batch]`'s keys and their defaults (the loader checks the table with it: batch-table.ts). */
export const batchTableSchema = table({
  enabled: z.boolean({ error: 'must be true or false' }).default(BATCH_DEFAULTS.enabled),
  max_file_bytes: positiveSizeBytes.default(BATCH_DEFAULTS.maxFileBytes),
  max_lines: wholeAtLeastOne.default(BATCH_DEFAULTS.maxLines),
  max_line_bytes: positiveSizeBytes.default(BATCH_DEFAULTS.maxLineBytes),
  max_tenant_bytes: positiveSizeBytes.default(BATCH_DEFAULTS.maxTenantBytes),
  retention: positiveDurationMs.default(BATCH_DEFAULTS.retentionMs),
  max_in_flight: wholeAtLeastOne.default(BATCH_DEFAULTS.maxInFlight),
  max_answer_bytes: positiveSizeBytes.default(BATCH_DEFAULTS.maxAnswerBytes),
  tick: positiveDurationMs.default(BATCH_DEFAULTS.tickMs),
  unknown_node_slots: wholeAtLeastOne.default(BATCH_DEFAULTS.unknownNodeSlots),
  files_dir: z.string({ error: 'must be a directory path' }).min(1, { error: 'must not be empty' }).optional(),
  shared_dir: z.string({ error: 'must be a directory path' }).min(1, { error: 'must not be empty' }).optional(),
});

/** `[batch]` as written (undefined = absent) → the settings, or every problem by its key. */
export function batchSettings(raw: Readonly<Record<string, unknown>> | undefined): BatchSettings | BatchConfigProblem {
  const parsed = batchTableSchema.safeParse(raw ?? {});
  if (!parsed.success)
    return new BatchConfigProblem(
      parsed.error.issues.map((issue) => `batch${issue.path.map((p) => `.${String(p)}`).join('')}: ${issue.message}`),
    );
  const t = parsed.data;
  return Object.freeze({
    enabled: t.enabled,
    maxFileBytes: t.max_file_bytes,
    maxLines: t.max_lines,
    maxLineBytes: t.max_line_bytes,
    maxTenantBytes: t.max_tenant_bytes,
    retentionMs: t.retention,
    maxInFlight: t.max_in_flight,
    maxAnswerBytes: t.max_answer_bytes,
    tickMs: t.tick,
    unknownNodeSlots: t.unknown_node_slots,
    filesDir: t.files_dir,
    sharedDir: t.shared_dir,
  });
}

/** `[batch]` holds values this build cannot use: each problem by its key path. */
export class BatchConfigProblem extends Error {
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(`invalid [batch] table: ${problems.join('; ')}`);
    this.name = 'BatchConfigProblem';
    this.problems = problems;
  }
}
