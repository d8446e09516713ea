// Which gateway `switchyard status` reads when no --url is given: the one the config describes,
// found the way `serve` finds it (--config FILE, else the first of DEFAULT_CONFIG_PATHS that
// exists). Its admin listener if it has one, else its main listener; a wildcard host is reached on
// loopback. Without any config file, the documented default address.

import { existsSync } from 'node:fs';
import type { EnvVars, GatewayConfig } from '#src/config/index.ts';
import { defaultConfigPath } from './config-lookup.ts';

export const DEFAULT_STATUS_URL = 'http://127.0.0.1:8080';

export interface StatusTarget {
  readonly url: string;
  /** The config's [admin] token, used when neither --token nor SWITCHYARD_ADMIN_TOKEN is given. */
  readonly token: string | undefined;
}

export type TargetResult =
  { readonly ok: true; readonly target: StatusTarget } | { readonly ok: false; readonly problem: string };

const LOOPBACK_FOR: Readonly<Record<string, string>> = { '0.0.0.0': '127.0.0.1', '::': '::1' };

/** Pure: the admin address a loaded config gives, or why it gives none. */
export function statusTargetOf(config: GatewayConfig, file: string): TargetResult {
  const own = config.admin.listen;
  const address = own ?? config.server.listen;
  const key = own === undefined ? '[server] listen' : '[admin] listen';
  if (address.port === 0) return { ok: false, problem: `${file}: ${key} has port 0 (a free port picked at start); give --url` };
  const host = LOOPBACK_FOR[address.host] ?? address.host;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
  return { ok: true, target: { url, token: config.admin.token } };
}

/** Reads the config like serve does; no file at all gives the default address. */
export async function findStatusTarget(given: string | undefined, env: EnvVars): Promise<TargetResult> {
  const file = given ?? defaultConfigPath(existsSync);
  if (file === undefined) return { ok: true, target: { url: DEFAULT_STATUS_URL, token: undefined } };
  // The config loader (its schemas: ~130 modules) only when a file is read: `status --url` needs none.
  const [{ formatProblems }, { loadConfigFile }] = await Promise.all([
    import('#src/config/index.ts'),
    import('#src/config-tables.ts'),
  ]);
  const loaded = await loadConfigFile(file, env);
  if (!loaded.ok) {
    return {
      ok: false,
      problem: `cannot take the gateway's address from ${file} (give --url):\n${formatProblems(loaded.problems)}`,
    };
  }
  return statusTargetOf(loaded.config, file);
}
