// The way out for spans: the SDK's BatchSpanProcessor and OTLP/HTTP exporter, with a bounded queue
// whose drops are counted (an unreachable or slow collector never holds a request, nor memory
// without bound), and every batch's outcome counted (the collector accepted it, or not). Loaded
// only with `[tracing]` (index.ts imports this file dynamically).

import type { Context } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import {
  BatchSpanProcessor,
  type ReadableSpan,
  type Span,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace';
import type { SpanFigures } from '#src/core/tracing.ts';

/** Spans waiting for export at most (besides the batch being sent); beyond, a finished span is dropped and counted. */
export const MAX_QUEUED_SPANS = 2048;
/** Spans per OTLP request. */
const MAX_BATCH_SPANS = 512;
/** How long spans wait before a partial batch goes (a full batch goes at once). */
const EXPORT_DELAY_MS = 1000;
/** One export's bound: the collector's connect and answer. */
export const EXPORT_TIMEOUT_MS = 5000;
/** ExportResultCode.SUCCESS of @opentelemetry/core (the SDK's dependency; not imported for one constant). */
const EXPORT_SUCCESS = 0;

type ExportCallback = Parameters<SpanExporter['export']>[1];

export interface ExportOptions {
  readonly url: string;
  /** The collector stopped accepting spans (told once per failing spell), or accepts them again. */
  readonly onExportTrouble: (trouble: string | undefined) => void;
  /** Queue bound (tests make it small). */
  readonly maxQueued?: number;
}

/** The counts behind `gateway_trace_spans_total`. */
class Counts {
  queued = 0;
  exported = 0;
  dropped = 0;
  failed = 0;
  failing = false;
}

/** Counts what the exporter is handed and what the collector says of it. */
class CountingExporter implements SpanExporter {
  readonly #inner: SpanExporter;
  readonly #counts: Counts;
  readonly #onTrouble: ExportOptions['onExportTrouble'];

  constructor(inner: SpanExporter, counts: Counts, onTrouble: ExportOptions['onExportTrouble']) {
    this.#inner = inner;
    this.#counts = counts;
    this.#onTrouble = onTrouble;
  }

  export(spans: ReadableSpan[], done: ExportCallback): void {
    const counts = this.#counts;
    counts.queued -= spans.length;
    this.#inner.export(spans, (result) => {
      if (result.code === EXPORT_SUCCESS) {
        counts.exported += spans.length;
        if (counts.failing) this.#onTrouble(undefined);
        counts.failing = false;
      } else {
        counts.failed += spans.length;
        if (!counts.failing) this.#onTrouble(result.error?.message ?? 'the collector refused the spans');
        counts.failing = true;
      }
      done(result);
    });
  }

  shutdown(): Promise<void> {
    return this.#inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.#inner.forceFlush?.() ?? Promise.resolve();
  }
}

/** Bounds the batch processor's queue itself, so a drop is counted here rather than lost inside it. */
class BoundedProcessor implements SpanProcessor {
  readonly #inner: SpanProcessor;
  readonly #counts: Counts;
  readonly #max: number;

  constructor(inner: SpanProcessor, counts: Counts, max: number) {
    this.#inner = inner;
    this.#counts = counts;
    this.#max = max;
  }

  onStart(span: Span, parent: Context): void {
    this.#inner.onStart(span, parent);
  }

  onEnd(span: ReadableSpan): void {
    // Spans not sampled are never exported (the batch processor skips them too).
    if ((span.spanContext().traceFlags & 1) === 0) return;
    if (this.#counts.queued >= this.#max) {
      this.#counts.dropped += 1;
      return;
    }
    this.#counts.queued += 1;
    this.#inner.onEnd(span);
  }

  forceFlush(): Promise<void> {
    return this.#inner.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.#inner.shutdown();
  }
}

export interface ExportPipeline {
  readonly processor: SpanProcessor;
  figures(): SpanFigures;
}

export function exportPipeline(options: ExportOptions): ExportPipeline {
  const counts = new Counts();
  const max = options.maxQueued ?? MAX_QUEUED_SPANS;
  const exporter = new OTLPTraceExporter({ url: options.url, timeoutMillis: EXPORT_TIMEOUT_MS, concurrencyLimit: 2 });
  const batches = new BatchSpanProcessor({
    exporter: new CountingExporter(exporter, counts, options.onExportTrouble),
    maxQueueSize: max,
    maxExportBatchSize: Math.min(MAX_BATCH_SPANS, max),
    scheduledDelayMillis: EXPORT_DELAY_MS,
    exportTimeoutMillis: EXPORT_TIMEOUT_MS,
  });
  return {
    processor: new BoundedProcessor(batches, counts, max),
    figures: () => ({ exported: counts.exported, dropped: counts.dropped, failed: counts.failed }),
  };
}
