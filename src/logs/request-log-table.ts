// `[log]`, the request log's config table (config/config-table.ts; docs/observability.md).
// `requests` is "off", "stdout", or a file path the gateway appends to, rotating it by size and
// reopening it on SIGHUP. Imports zod and config/ only.

import { z } from 'zod';
import type { ConfigTable } from '#src/config/config-table.ts';
import { plural } from '#src/config/plural.ts';
import { positiveSizeBytes, table } from '#src/config/schema-parts.ts';
import { formatSizeBytes } from '#src/config/size.ts';
import type { LogConfig, RequestLogTarget } from './request-log-config.ts';

export const LOG_DEFAULTS: LogConfig = Object.freeze({
  requests: Object.freeze({ kind: 'off' as const }),
  requestsMaxBytes: 100 * 1024 * 1024,
  requestsKeep: 5,
  requestsBufferLines: 10_000,
  bodies: false,
  bodiesMaxBytes: 4 * 1024,
});

const REQUESTS_ERROR = 'must be "off", "stdout", or the path of a file to append to';

function requestTarget(value: string, ctx: z.core.$RefinementCtx): RequestLogTarget {
  if (value === 'off') return { kind: 'off' };
  if (value === 'stdout') return { kind: 'stdout' };
  if (value.trim() === '' || value.trim() !== value || value.includes('\0')) {
    ctx.addIssue({ code: 'custom', message: REQUESTS_ERROR });
    return { kind: 'off' };
  }
  return { kind: 'file', path: value };
}

const wholeUpTo = (min: number, max: number) => {
  const error = `must be a whole number from ${min} to ${max}`;
  return z.int({ error }).min(min, { error }).max(max, { error });
};

const logSchema = table({
  requests: z.string({ error: REQUESTS_ERROR }).transform(requestTarget).default(LOG_DEFAULTS.requests),
  requests_max_bytes: positiveSizeBytes.default(LOG_DEFAULTS.requestsMaxBytes),
  requests_keep: wholeUpTo(0, 100).default(LOG_DEFAULTS.requestsKeep),
  requests_buffer_lines: wholeUpTo(1, 1_000_000).default(LOG_DEFAULTS.requestsBufferLines),
  bodies: z.boolean({ error: 'must be true or false' }).default(LOG_DEFAULTS.bodies),
  bodies_max_bytes: positiveSizeBytes
    .refine((n) => n <= 1024 * 1024, { error: 'must be at most 1MiB (a request log line holds the prompt text up to this)' })
    .default(LOG_DEFAULTS.bodiesMaxBytes),
}).transform((log): LogConfig => ({
  requests: log.requests,
  requestsMaxBytes: log.requests_max_bytes,
  requestsKeep: log.requests_keep,
  requestsBufferLines: log.requests_buffer_lines,
  bodies: log.bodies,
  bodiesMaxBytes: log.bodies_max_bytes,
}));

export const requestLogTable = Object.freeze<ConfigTable<'log'>>({
  name: 'log',
  schema: () => logSchema.prefault({}),
  summary: ({ log }) => [describeLog(log)],
  // The request log's target is opened once, at start; SIGHUP reopens the same file (docs/observability.md).
  restartOnly: (previous, next) => (JSON.stringify(previous.log) === JSON.stringify(next.log) ? [] : ['log']),
});

function describeLog(log: LogConfig | undefined): string {
  const requests = log?.requests ?? { kind: 'off' as const };
  if (log === undefined || requests.kind === 'off') return 'request log: off';
  const where = requests.kind === 'stdout' ? 'to standard output' : `to ${requests.path}`;
  const rotation =
    requests.kind === 'file'
      ? `, rotated at ${formatSizeBytes(log.requestsMaxBytes)} keeping ${plural(log.requestsKeep, 'file')}`
      : '';
  const bodies = log.bodies ? `, prompt text up to ${formatSizeBytes(log.bodiesMaxBytes)} a line` : ', no prompt text';
  return `request log: ${where}${rotation}${bodies}`;
}
