// The config's feature list: the one place that names the features' config tables
// (config/config-table.ts). Each table lives in its feature's folder and imports zod, config/ and core/
// only, so that reading a config (check-config, `serve` before it starts anything) loads no
// feature's runtime. config/ cannot import them (every feature imports config/): the loader, the
// restart check and check-config's summary are bound to this list here. A new feature's table:
// its file in the feature's folder, one line below.

import { configLoader, type AnyConfigTable, type ConfigWarning, type GatewayConfig } from '#src/config/index.ts';
import { restartOnlyChecker } from '#src/config/restart-only.ts';
import { clusterTable } from '#src/cluster/cluster-table.ts';
import { requestLogTable } from '#src/logs/request-log-table.ts';
import { meshTable } from '#src/mesh/config/mesh-table.ts';
import { tenantsTable } from '#src/tenants/tenants-table.ts';
import { tracingTable } from '#src/tracing/tracing-table.ts';
import { batchTable } from '#src/batch/batch-table.ts';

/** The features' tables, in the file's order (the schema's keys, problems, restart-only keys and check-config's lines follow it). */
export const CONFIG_TABLES: readonly AnyConfigTable[] = [
  meshTable,
  clusterTable,
  tenantsTable,
  requestLogTable,
  tracingTable,
  batchTable,
];

/** `loadConfig(text, env, source?, readFile?)` and `loadConfigFile(path, env)` of the gateway's config file. */
export const { loadConfig, loadConfigFile } = configLoader(CONFIG_TABLES);

/** The settings a reload changed that need a restart: the gateway's own, then each table's. */
export const restartOnlyChanges = restartOnlyChecker(CONFIG_TABLES);

/** check-config's lines of the features' tables, in the list's order. */
export function featureSummary(config: GatewayConfig): string[] {
  return CONFIG_TABLES.flatMap((table) => table.summary(config));
}

/** What the features' tables warn of in a valid config (check-config prints them, `serve` logs them at start). */
export function configWarnings(config: GatewayConfig): ConfigWarning[] {
  return CONFIG_TABLES.flatMap((table) => table.warnings?.(config) ?? []);
}
