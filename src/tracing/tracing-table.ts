// `[tracing]`, the tracing's config table (config/config-table.ts): OpenTelemetry traces of the
// requests, exported over OTLP/HTTP (docs/observability.md, "Tracing"). Absent = off, and nothing of
// the SDK is loaded (this file imports zod and config/ only).

import { z } from 'zod';
import type { ConfigTable } from '#src/config/config-table.ts';
import { table } from '#src/config/schema-parts.ts';
import type { TracingConfig } from './tracing-config.ts';

export const TRACING_DEFAULTS = Object.freeze({ serviceName: 'switchyard', sampleRatio: 1 });

const ENDPOINT_ERROR = 'must be the http(s) URL of an OTLP/HTTP traces receiver, e.g. "http://127.0.0.1:4318/v1/traces"';

const endpoint = z.string({ error: ENDPOINT_ERROR }).refine(
  (text) => {
    if (!URL.canParse(text)) return false;
    const url = new URL(text);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.username === '' && url.password === '';
  },
  { error: ENDPOINT_ERROR },
);

const ratioError = 'must be a number from 0 to 1';

const tracingSchema = table({
  otlp_endpoint: endpoint,
  service_name: z
    .string({ error: 'must be a non-empty string' })
    .min(1, { error: 'must be a non-empty string' })
    .max(256, { error: 'must be at most 256 characters' })
    .default(TRACING_DEFAULTS.serviceName),
  sample_ratio: z
    .number({ error: ratioError })
    .min(0, { error: ratioError })
    .max(1, { error: ratioError })
    .default(TRACING_DEFAULTS.sampleRatio),
}).transform((tracing): TracingConfig => ({
  otlpEndpoint: tracing.otlp_endpoint,
  serviceName: tracing.service_name,
  sampleRatio: tracing.sample_ratio,
}));

export const tracingTable = Object.freeze<ConfigTable<'tracing'>>({
  name: 'tracing',
  schema: () => tracingSchema.optional(),
  summary: ({ tracing }) => [
    tracing === undefined
      ? 'tracing: off'
      : `tracing: OTLP to ${tracing.otlpEndpoint} as ${tracing.serviceName}, sampling ${tracing.sampleRatio * 100}% of traces`,
  ],
  // Each request plane's tracer (provider and exporter) is built once, when it starts listening.
  restartOnly: (previous, next) => (JSON.stringify(previous.tracing) === JSON.stringify(next.tracing) ? [] : ['tracing']),
});
