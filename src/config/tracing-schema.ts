// `[tracing]`: OpenTelemetry traces of the requests, exported over OTLP/HTTP (docs/observability.md,
// "Tracing"). Absent = off, and nothing of the SDK is loaded.

import { z } from 'zod';
import { table } from './schema-parts.ts';
import type { TracingConfig } from './tracing-types.ts';

export type { TracingConfig } from './tracing-types.ts';

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

export const tracingSchema = table({
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
