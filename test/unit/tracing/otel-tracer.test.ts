// The OpenTelemetry tracer behind the port, against a collector that accepts connections and
// never answers: spans beyond the bounded queue are dropped and counted, nothing waits on the
// collector, and shutdown returns within its bound. And who decides sampling.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { otelTracer } from '#src/tracing/otel-tracer.ts';
import type { RequestSpanStart, RequestTracer } from '#src/core/tracing.ts';

const start = (over: Partial<RequestSpanStart> = {}): RequestSpanStart => ({
  method: 'POST',
  endpoint: '/v1/chat/completions',
  traceparent: undefined,
  tracestate: undefined,
  fromSite: undefined,
  requestId: 'r',
  ...over,
});

const END = {
  status: 200,
  target: 'n',
  requestedModel: 'm',
  model: 'm',
  tenant: undefined,
  refusal: undefined,
  error: undefined,
  inputTokens: 1,
  outputTokens: 2,
  attempts: 1,
};

/** A collector that takes the connection and the body, and never answers. */
async function silentCollector(): Promise<{ url: string; received: () => number; close: () => Promise<void> }> {
  const held: ServerResponse[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    held.push(res);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`,
    received: () => held.length,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const sentContext = (tracer: RequestTracer, over: Partial<RequestSpanStart> = {}): string => {
  const span = tracer.request(start(over));
  const attempt = span.attempt({ kind: 'node', name: 'n', url: 'http://127.0.0.1:1', index: 1 });
  const header = attempt.headers?.traceparent ?? '';
  attempt.end({
    outcome: 'success',
    status: 200,
    error: undefined,
    failedOver: false,
    inputTokens: undefined,
    outputTokens: undefined,
  });
  span.end(END);
  return header;
};

test('a collector that never answers: spans past the queue are dropped and counted, and shutdown keeps its bound', async () => {
  const collector = await silentCollector();
  const troubles: (string | undefined)[] = [];
  const tracer = otelTracer(
    { otlpEndpoint: collector.url, serviceName: 't', sampleRatio: 1 },
    { onExportTrouble: (t) => troubles.push(t), maxQueued: 4 },
  );
  try {
    for (let i = 0; i < 20; i++) tracer.request(start()).end(END);
    const figures = tracer.figures();
    // The first full batch (4) went to the collector at once; 4 more wait behind it; the other 12 are dropped, none waited for.
    assert.equal(figures.dropped, 12);
    assert.equal(collector.received() <= 1, true, 'one export in flight at a time');
    assert.equal(figures.exported, 0);
    // Shutdown tries to export the 4 queued spans; the collector never answers: it gives up at its bound.
    await tracer.shutdown(300);
    assert.equal(tracer.figures().exported, 0);
  } finally {
    await collector.close();
  }
});

test("sampling: the ratio decides a new trace and a client's; a pinned site's forward follows its sender", async () => {
  const collector = await silentCollector();
  const none = otelTracer({ otlpEndpoint: collector.url, serviceName: 't', sampleRatio: 0 }, { onExportTrouble: () => {} });
  const all = otelTracer({ otlpEndpoint: collector.url, serviceName: 't', sampleRatio: 1 }, { onExportTrouble: () => {} });
  const sampledParent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
  const unsampledParent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00';
  try {
    assert.match(sentContext(none), /^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/, 'ratio 0: a new trace, not sampled, still propagated');
    assert.match(
      sentContext(none, { traceparent: sampledParent }),
      /^00-4bf92f3577b34da6a3ce929d0e0e4736-(?!00f067aa0ba902b7)[0-9a-f]{16}-00$/,
      "ratio 0: a client's sampled flag does not force a trace",
    );
    assert.match(
      sentContext(none, { traceparent: sampledParent, fromSite: 'a' }),
      /-01$/,
      "ratio 0: a pinned site's sampled forward is recorded",
    );
    assert.match(
      sentContext(all, { traceparent: unsampledParent, fromSite: 'a' }),
      /-00$/,
      "ratio 1: a pinned site's unsampled forward is not",
    );
    assert.match(
      sentContext(all, { traceparent: unsampledParent }),
      /-01$/,
      "ratio 1: a client's trace is recorded whatever its flag",
    );
  } finally {
    await Promise.all([none.shutdown(300), all.shutdown(300)]);
    await collector.close();
  }
});

test('a routing decision that waited in the queue: a queue span beside it, as long as the wait, under the request', async () => {
  const { startOtlpReceiver } = await import('#test/fixtures/otlp-receiver.ts');
  const receiver = await startOtlpReceiver();
  const tracer = otelTracer({ otlpEndpoint: receiver.url, serviceName: 'q', sampleRatio: 1 }, { onExportTrouble: () => {} });
  try {
    const span = tracer.request(start());
    span.resolved('alias', 'm');
    span
      .routing()
      .end({ among: 'node', chosen: 'n1', policy: 'least-loaded', reason: 'fewest in flight (0, 1 tied)', waitedMs: 250 });
    span.end(END);
    await tracer.shutdown(5_000);
    const request = receiver.spans.find((s) => s.kind === 2);
    const route = receiver.spans.find((s) => s.name === 'switchyard.route');
    const queue = receiver.spans.find((s) => s.name === 'switchyard.queue');
    assert.equal(request?.name, 'chat alias');
    assert.equal(route?.parentSpanId, request?.spanId);
    assert.equal(route?.attributes['switchyard.route.chosen'], 'n1');
    assert.equal(route?.attributes['switchyard.route.reason'], 'fewest in flight (0, 1 tied)');
    assert.equal(route?.attributes['switchyard.queue.wait_ms'], 250);
    assert.equal(queue?.parentSpanId, request?.spanId);
    assert.equal(queue?.attributes['switchyard.queue.wait_ms'], 250);
    assert.equal(queue?.attributes['gen_ai.request.model'], 'm');
    assert.ok(Math.abs((queue?.durationMs ?? 0) - 250) < 1, `the queue span lasts the wait: ${queue?.durationMs} ms`);
  } finally {
    await receiver.close();
  }
});
