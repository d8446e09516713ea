// Tracing (`[tracing]`, docs/observability.md): the tracer a request plane host uses. Off (no
// `[tracing]`) there is none (undefined) and nothing of OpenTelemetry is ever imported; on, the SDK is
// loaded here, once per host, by a dynamic import.

import type { TracingConfig } from '#src/tracing/tracing-config.ts';
import type { RequestTracer } from '#src/core/tracing.ts';

export interface TracerHost {
  /** Says the collector stopped accepting spans (once per failing spell), and that it accepts them again. */
  readonly warn: (fields: Record<string, unknown>, message: string) => void;
  /** Which host this is (`main`, `worker-1`, …): the resource's `switchyard.plane`. */
  readonly plane: string;
}

export async function loadTracer(config: TracingConfig | undefined, host: TracerHost): Promise<RequestTracer | undefined> {
  if (config === undefined) return undefined;
  const { otelTracer } = await import('./otel-tracer.ts');
  const onExportTrouble = (trouble: string | undefined): void => {
    if (trouble === undefined) host.warn({ plane: host.plane }, 'the trace collector accepts spans again');
    else
      host.warn(
        { plane: host.plane, error: trouble },
        'the trace collector does not accept spans; they are dropped and counted (gateway_trace_spans_total) until it does',
      );
  };
  return otelTracer(config, { onExportTrouble, resource: { 'switchyard.plane': host.plane } });
}
