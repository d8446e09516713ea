// The tracing feature (`[tracing]`), wiring only: each request plane builds its own tracer (its
// provider and exporter, loaded only with [tracing]: index.ts) when it starts listening; this
// feature gives the in-thread plane its tracer and counts every host's spans on /metrics.

import type { Registry } from 'prom-client';
import type { Feature } from '#src/core/feature.ts';
import type { RequestTracer, SpanFigures } from '#src/core/tracing.ts';
import type { GatewayConfig } from '#src/config/index.ts';
import type { TracingConfig } from '#src/tracing/tracing-config.ts';
import { loadTracer, type TracerHost } from './index.ts';
import { registerTraceMetrics } from './trace-metrics.ts';

/** What tracing adds to the owner's parts (gateway/features.ts names them). */
export interface TracingParts {
  /** The tracer of a request plane hosted in this thread. */
  readonly tracer: (host: TracerHost) => Promise<RequestTracer | undefined>;
}

export class TracingFeature implements Feature<GatewayConfig, TracingParts> {
  readonly name = 'tracing';
  readonly parts: TracingParts;
  /** Every host's span counts, summed (the owner's plane figures). */
  readonly #spans: () => SpanFigures | undefined;

  constructor(config: TracingConfig, spans: () => SpanFigures | undefined) {
    this.#spans = spans;
    this.parts = { tracer: (host) => loadTracer(config, host) };
  }

  metrics(registry: Registry): void {
    registerTraceMetrics(registry, this.#spans);
  }

  /** Each plane starts and stops its own tracer. */
  start(): void {}

  stop(): void {}
}
