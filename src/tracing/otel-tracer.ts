// The tracing port (core/tracing.ts) over the OpenTelemetry SDK: one TracerProvider per request
// plane host (the main thread, or each worker thread), never registered globally; spans get their
// parent passed explicitly (no context manager, no async hooks). Loaded only with `[tracing]`.

import {
  createTraceState,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { TracerProvider } from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { TracingConfig } from '#src/tracing/tracing-config.ts';
import type {
  AttemptEndNote,
  AttemptNote,
  AttemptSpan,
  RequestEndNote,
  RequestSpan,
  RequestSpanStart,
  RequestTracer,
  RouteNote,
  RoutingSpan,
} from '#src/core/tracing.ts';
import { exportPipeline, type ExportOptions } from './export-pipeline.ts';
import { RequestSampler } from './request-sampler.ts';
import { ATTR, operationOf, serverOf } from './span-attributes.ts';
import { formatTraceparent, parseTraceparent, tracestateOf } from './traceparent.ts';

export interface OtelTracerOptions {
  readonly onExportTrouble: ExportOptions['onExportTrouble'];
  /** Resource attributes beside service.name (which plane host this is). */
  readonly resource?: Attributes;
  readonly maxQueued?: number;
}

export function otelTracer(config: TracingConfig, options: OtelTracerOptions): RequestTracer {
  const pipeline = exportPipeline({
    url: config.otlpEndpoint,
    onExportTrouble: options.onExportTrouble,
    maxQueued: options.maxQueued,
  });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: config.serviceName, ...options.resource }),
    sampler: new RequestSampler(config.sampleRatio),
    spanProcessors: [pipeline.processor],
  });
  const tracer = provider.getTracer('switchyard');
  let stopped: Promise<void> | undefined;
  return {
    request: (start) => new OtelRequestSpan(tracer, start),
    figures: () => pipeline.figures(),
    shutdown(timeoutMs) {
      stopped ??= boundedBy(provider.shutdown(), timeoutMs);
      return stopped;
    },
  };
}

/** `work`, or nothing once `timeoutMs` passed; never rejects. */
async function boundedBy(work: Promise<void>, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, timeoutMs);
    timer.unref();
  });
  try {
    await Promise.race([work.catch(() => undefined), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Wall-clock epoch milliseconds as the SDK's clock reads them. */
const nowMs = (): number => performance.timeOrigin + performance.now();

function parentContext(start: RequestSpanStart): Context {
  const parent = parseTraceparent(start.traceparent);
  if (parent === undefined) return ROOT_CONTEXT;
  const state = tracestateOf(start.tracestate);
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId: parent.traceId,
    spanId: parent.spanId,
    traceFlags: parent.flags,
    isRemote: true,
    ...(state === undefined ? {} : { traceState: createTraceState(state) }),
  });
}

function tokens(input: number | undefined, output: number | undefined): Attributes {
  return {
    ...(input === undefined ? {} : { [ATTR.inputTokens]: input }),
    ...(output === undefined ? {} : { [ATTR.outputTokens]: output }),
  };
}

class OtelRequestSpan implements RequestSpan {
  readonly #tracer: Tracer;
  readonly #span: Span;
  readonly #context: Context;
  readonly #operation: string;
  #model = '';

  constructor(tracer: Tracer, start: RequestSpanStart) {
    this.#tracer = tracer;
    this.#operation = operationOf(start.endpoint);
    const attributes: Attributes = {
      [ATTR.method]: start.method,
      [ATTR.route]: start.endpoint,
      [ATTR.path]: start.endpoint,
      [ATTR.operation]: this.#operation,
      [ATTR.requestId]: start.requestId,
      ...(start.fromSite === undefined ? {} : { [ATTR.fromSite]: start.fromSite }),
    };
    this.#span = tracer.startSpan(
      `${start.method} ${start.endpoint}`,
      { kind: SpanKind.SERVER, attributes },
      parentContext(start),
    );
    this.#context = trace.setSpan(ROOT_CONTEXT, this.#span);
  }

  resolved(requestedModel: string, model: string): void {
    this.#model = model;
    // A span not sampled records nothing: its attributes are not even built (sample_ratio < 1 stays cheap).
    if (!this.#span.isRecording()) return;
    this.#span.setAttribute(ATTR.requestModel, requestedModel);
    this.#span.updateName(`${this.#operation} ${requestedModel}`);
  }

  routing(): RoutingSpan {
    const span = this.#tracer.startSpan('switchyard.route', { kind: SpanKind.INTERNAL }, this.#context);
    if (!span.isRecording()) return { end: () => span.end() };
    return {
      end: (note: RouteNote) => {
        span.setAttributes({
          [ATTR.among]: note.among,
          [ATTR.reason]: note.reason,
          ...(note.chosen === undefined ? {} : { [ATTR.chosen]: note.chosen }),
          ...(note.policy === undefined ? {} : { [ATTR.policy]: note.policy }),
          ...(note.waitedMs > 0 ? { [ATTR.waited]: note.waitedMs } : {}),
        });
        const end = nowMs();
        if (note.waitedMs > 0) {
          const queue = this.#tracer.startSpan(
            'switchyard.queue',
            {
              kind: SpanKind.INTERNAL,
              startTime: end - note.waitedMs,
              attributes: { [ATTR.waited]: note.waitedMs, [ATTR.requestModel]: this.#model },
            },
            this.#context,
          );
          queue.end(end);
        }
        span.end(end);
      },
    };
  }

  attempt(note: AttemptNote): AttemptSpan {
    const recording = this.#span.isRecording();
    const attributes: Attributes | undefined = !recording
      ? undefined
      : {
          [ATTR.operation]: this.#operation,
          [ATTR.requestModel]: this.#model,
          [note.kind === 'node' ? ATTR.node : ATTR.site]: note.name,
          [ATTR.attempt]: note.index,
          ...serverOf(note.url),
        };
    const span = this.#tracer.startSpan(
      `${this.#operation} ${this.#model}`,
      { kind: SpanKind.CLIENT, attributes },
      this.#context,
    );
    const context = span.spanContext();
    const state = context.traceState?.serialize();
    const headers = {
      traceparent: formatTraceparent(context.traceId, context.spanId, context.traceFlags),
      ...(state ? { tracestate: state } : {}),
    };
    const model = this.#model;
    if (!recording) return { headers, end: () => span.end() };
    return {
      headers,
      end: (end: AttemptEndNote) => {
        span.setAttributes({
          [ATTR.outcome]: end.outcome,
          [ATTR.failover]: end.failedOver,
          ...(end.status === undefined ? {} : { [ATTR.status]: end.status }),
          ...(end.outcome === 'success' ? { [ATTR.responseModel]: model } : { [ATTR.errorType]: end.outcome }),
          ...tokens(end.inputTokens, end.outputTokens),
        });
        if (end.outcome !== 'success') span.setStatus({ code: SpanStatusCode.ERROR, message: end.error ?? end.outcome });
        span.end();
      },
    };
  }

  end(note: RequestEndNote): void {
    const span = this.#span;
    if (!span.isRecording()) return span.end();
    const failed = note.status >= 500;
    span.setAttributes({
      [ATTR.status]: note.status,
      [ATTR.attempts]: note.attempts,
      ...(note.requestedModel === '' ? {} : { [ATTR.requestModel]: note.requestedModel }),
      ...(note.model === '' || note.target === undefined ? {} : { [ATTR.responseModel]: note.model }),
      ...(note.target === undefined ? {} : { [ATTR.target]: note.target }),
      ...(note.tenant === undefined ? {} : { [ATTR.tenant]: note.tenant }),
      ...(note.refusal === undefined ? {} : { [ATTR.refusal]: note.refusal }),
      ...(failed || note.error !== undefined
        ? { [ATTR.errorType]: note.refusal ?? (note.error === undefined ? String(note.status) : 'stream_error') }
        : {}),
      ...tokens(note.inputTokens, note.outputTokens),
    });
    if (failed || note.error !== undefined)
      span.setStatus({ code: SpanStatusCode.ERROR, ...(note.error === undefined ? {} : { message: note.error }) });
    span.end();
  }
}
