// `gateway_trace_spans_total{outcome}`: what the request planes' tracers did with their spans
// ([tracing] only): exported, dropped (the export queue was full: a slow or unreachable
// collector), or failed (the collector refused a batch, or it timed out). Summed over the hosts.

import { Counter, type Registry } from 'prom-client';
import type { SpanFigures } from '#src/core/tracing.ts';

/** The tracers' counts, read at scrape time; undefined = tracing is off. */
export type TraceSpanFigures = () => SpanFigures | undefined;

export function registerTraceMetrics(r: Registry, figures: TraceSpanFigures): void {
  new Counter({
    name: 'gateway_trace_spans_total',
    help: 'Trace spans by outcome: exported, dropped (the export queue was full), failed (the collector refused or timed out).',
    labelNames: ['outcome'],
    registers: [r],
    collect() {
      const now = figures();
      this.reset();
      if (now === undefined) return;
      this.inc({ outcome: 'exported' }, now.exported);
      this.inc({ outcome: 'dropped' }, now.dropped);
      this.inc({ outcome: 'failed' }, now.failed);
    },
  });
}
