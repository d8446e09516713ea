// Builds the pino logger: JSON by default (one object per line), or pretty for humans.
// Secrets are redacted by path as a second line of defence; code never logs them on purpose.

import pino, { type Logger } from 'pino';
import pretty from 'pino-pretty';

export type LogFormat = 'json' | 'pretty';

export interface LoggerOptions {
  readonly format: LogFormat;
  readonly level?: string;
  /** File descriptor to write to (1 = stdout, 2 = stderr). */
  readonly fd?: number;
}

const REDACT: readonly string[] = ['apiKey', '*.apiKey', '*.*.apiKey', 'api_key', '*.api_key', 'authorization', '*.authorization', 'token', '*.token'];

export function createLogger(options: LoggerOptions): Logger {
  const base = { level: options.level ?? 'info', redact: { paths: [...REDACT], censor: '[redacted]' }, base: undefined };
  const fd = options.fd ?? 1;
  if (options.format === 'pretty') {
    return pino(base, pretty({ destination: fd, sync: true, colorize: false, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' }));
  }
  return pino(base, pino.destination({ fd, sync: true }));
}

export function parseLogFormat(value: string | undefined): LogFormat | undefined {
  if (value === undefined || value === 'json') return 'json';
  if (value === 'pretty') return 'pretty';
  return undefined;
}

export type { Logger };
