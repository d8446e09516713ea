// `node bench/tracing-calls.ts [N]`: the tracing port's own cost per request, in process — what
// the request path calls for one request with one attempt (the request span, a routing decision,
// an attempt span with its traceparent, the ends) through the OpenTelemetry tracer, at
// sample_ratio 1 (exported over OTLP/HTTP to a sink in this process that counts bytes and
// discards them; the serialisation and the HTTP exports are included) and at 0. CPU µs per request
// from process.cpuUsage, the sink's few reads included.

import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { otelTracer } from '#src/tracing/otel-tracer.ts';
import type { RequestTracer } from '#src/core/tracing.ts';

export interface TracingCallsResult {
  readonly ratio: number;
  readonly requests: number;
  readonly cpuUsPerRequest: number;
  readonly exported: number;
  readonly dropped: number;
}

const START = { method: 'POST', endpoint: '/v1/chat/completions', tracestate: undefined, fromSite: undefined };
const END = {
  status: 200,
  target: 'gpu-a',
  requestedModel: 'llama',
  model: 'llama-3.1-8b-instruct',
  tenant: 'team-a',
  refusal: undefined,
  error: undefined,
  inputTokens: 512,
  outputTokens: 128,
  attempts: 1,
};
const ROUTE = {
  among: 'node' as const,
  chosen: 'gpu-a',
  policy: 'least-loaded',
  reason: 'fewest in flight (0, 2 tied)',
  waitedMs: 0,
};
const ATTEMPT_END = { outcome: 'success', status: 200, error: undefined, failedOver: false, inputTokens: 512, outputTokens: 128 };

function oneRequest(tracer: RequestTracer, i: number): string {
  const span = tracer.request({
    ...START,
    traceparent: i % 2 === 0 ? '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' : undefined,
    requestId: `r-${i}`,
  });
  span.resolved('llama', 'llama-3.1-8b-instruct');
  span.routing().end(ROUTE);
  const attempt = span.attempt({ kind: 'node', name: 'gpu-a', url: 'http://10.0.0.5:8000', index: 1 });
  const header = attempt.headers?.traceparent ?? '';
  attempt.end(ATTEMPT_END);
  span.end(END);
  return header;
}

export async function measureTracingCalls(count: number): Promise<TracingCallsResult[]> {
  let bytes = 0;
  const sink = createServer((req, res) => {
    req.on('data', (chunk: Buffer) => void (bytes += chunk.length));
    req.on('end', () => void res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  sink.listen(0, '127.0.0.1');
  await once(sink, 'listening');
  const url = `http://127.0.0.1:${(sink.address() as AddressInfo).port}/v1/traces`;
  const results: TracingCallsResult[] = [];
  try {
    for (const ratio of [1, 0]) {
      const tracer = otelTracer({ otlpEndpoint: url, serviceName: 'bench', sampleRatio: ratio }, { onExportTrouble: () => {} });
      for (let i = 0; i < 2_000; i++) oneRequest(tracer, i);
      const cpu = process.cpuUsage();
      // As requests end: a few per tick, the exporter's batches going out between them (its queue never full).
      for (let i = 0; i < count; i += 16) {
        for (let j = i; j < Math.min(count, i + 16); j++) oneRequest(tracer, j);
        await new Promise((resolve) => setImmediate(resolve));
      }
      await tracer.shutdown(10_000);
      const used = process.cpuUsage(cpu);
      const figures = tracer.figures();
      results.push({
        ratio,
        requests: count,
        cpuUsPerRequest: (used.user + used.system) / count,
        exported: figures.exported,
        dropped: figures.dropped,
      });
    }
  } finally {
    await new Promise<void>((resolve) => sink.close(() => resolve()));
  }
  return results;
}

if (import.meta.main) {
  const results = await measureTracingCalls(Number(process.argv[2] ?? 50_000));
  for (const r of results)
    process.stdout.write(
      `sample_ratio ${r.ratio}: CPU ${r.cpuUsPerRequest.toFixed(2)} µs/request (${r.requests} requests, ${r.exported} spans exported, ${r.dropped} dropped)\n`,
    );
}
