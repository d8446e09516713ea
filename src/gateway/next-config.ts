// A reload's first half: the config file read and checked again. A rejected file keeps the running
// config (its problems logged and answered); settings that only a restart applies are named.

import type { Logger } from 'pino';
import type { ConfigProblem, GatewayConfig } from '#src/config/index.ts';
import type { GatewayOptions } from './options.ts';
import { restartOnlyChanges } from '#src/config-tables.ts';

export type NextConfig =
  { readonly ok: true; readonly config: GatewayConfig } | { readonly ok: false; readonly problems: readonly ConfigProblem[] };

export async function nextConfig(
  options: Pick<GatewayOptions, 'loadConfig'>,
  logger: Logger,
  previous: GatewayConfig,
): Promise<NextConfig> {
  if (options.loadConfig === undefined) return { ok: false, problems: [{ path: '', message: 'reload is not supported here' }] };
  const loaded = await options.loadConfig();
  if (!loaded.ok) {
    logger.error(
      { problems: loaded.problems.map((p) => `${p.path}: ${p.message}`) },
      'config reload rejected; keeping the running config',
    );
    return { ok: false, problems: loaded.problems };
  }
  const restartOnly = restartOnlyChanges(previous, loaded.config);
  if (restartOnly.length > 0) logger.warn({ keys: restartOnly }, 'these settings take effect only after a restart');
  return { ok: true, config: loaded.config };
}
