// `[batch]`, the Files and Batch API's config table (config/config-table.ts): its bounds, checked
// at load like every table (each problem by its key path), and kept as written for the feature,
// which reads it into its settings (batch-config.ts) at start and on every reload. The API is
// served wherever `[server] state_dir` is set; the table may change its bounds or turn it off.

import { z } from 'zod';
import type { ConfigTable } from '#src/config/config-table.ts';
import { BATCH_DEFAULTS, batchSettings, BatchConfigProblem, batchTableSchema } from './batch-config.ts';

declare module '#src/config/types.ts' {
  interface GatewayConfig {
    /** `[batch]` as written: the Files and Batch API's bounds (src/batch/batch-config.ts); undefined = defaults. */
    readonly batch?: Readonly<Record<string, unknown>> | undefined;
  }
}

const asWritten = z
  .record(z.string(), z.unknown(), { error: 'must be a table' })
  .superRefine((raw, context) => {
    const checked = batchTableSchema.safeParse(raw);
    if (checked.success) return;
    for (const issue of checked.error.issues) context.addIssue({ code: 'custom', message: issue.message, path: issue.path });
  })
  .optional();

export const batchTable = Object.freeze<ConfigTable<'batch'>>({
  name: 'batch',
  schema: () => asWritten,
  summary: (config) => {
    if (config.server.stateDir === undefined) return ['batch: off (the Files and Batch API needs [server] state_dir)'];
    const settings = batchSettings(config.batch);
    if (settings instanceof BatchConfigProblem) return [`batch: ${settings.message}`];
    if (!settings.enabled) return ['batch: off ([batch] enabled = false)'];
    const mib = (bytes: number): string => `${Math.round(bytes / 1024 / 1024)} MiB`;
    const changed =
      settings.maxInFlight === BATCH_DEFAULTS.maxInFlight ? '' : `, ${settings.maxInFlight} lines in flight at most`;
    return [
      `batch: the Files and Batch API, kept in ${settings.sharedDir === undefined ? config.server.stateDir : `${settings.sharedDir} (shared by the replicas)`}; files up to ${mib(settings.maxFileBytes)} and ${settings.maxLines} lines${changed}`,
    ];
  },
});
