// Builds the pino logger: JSON by default (one object per line), or pretty for humans.
// Secrets are redacted by path as a second line of defence; code never logs them on purpose.

import { createRequire } from 'node:module';
import pino, { type Logger } from 'pino';

/** pino-pretty (CommonJS) is loaded only for `--log-format pretty`: the JSON logger never needs it. */
const load = createRequire(import.meta.url);
const pretty = (options: import('pino-pretty').PrettyOptions): ReturnType<typeof import('pino-pretty')> =>
  (load('pino-pretty') as typeof import('pino-pretty'))(options);

export type LogFormat = 'json' | 'pretty';

export interface LoggerOptions {
  readonly format: LogFormat;
  readonly level?: string;
  /** File descriptor to write to (1 = stdout, 2 = stderr). */
  readonly fd?: number;
}

const REDACT: readonly string[] = [
  'apiKey',
  '*.apiKey',
  '*.*.apiKey',
  'api_key',
  '*.api_key',
  'authorization',
  '*.authorization',
  'token',
  '*.token',
];

export function createLogger(options: LoggerOptions): Logger {
  const base = { level: options.level ?? 'info', redact: { paths: [...REDACT], censor: '[redacted]' }, base: undefined };
  const fd = options.fd ?? 1;
  if (options.format === 'pretty') {
    return pino(
      base,
      pretty({ destination: fd, sync: true, colorize: false, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' }),
    );
  }
  return pino(base, pino.destination({ fd, sync: true }));
}

export function parseLogFormat(value: string | undefined): LogFormat | undefined {
  if (value === undefined || value === 'json') return 'json';
  if (value === 'pretty') return 'pretty';
  return undefined;
}

export type { Logger };
