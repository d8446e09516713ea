// Issue 27, tracing is free when off: without [tracing] no module of the OpenTelemetry SDK is
// loaded, and no module of the gateway imports any OpenTelemetry package — it is imported
// dynamically, only when configured. (prom-client imports @opentelemetry/api itself, for exemplars,
// with or without tracing: that one is not ours.) A process that watches every module resolved
// from its first line serves a request without [tracing] and sees none of them; with [tracing] it
// sees the SDK and the OTLP exporter (which shows the watch works).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startOtlpReceiver } from '#test/fixtures/otlp-receiver.ts';

const PROBE = fileURLToPath(new URL('../../fixtures/otel-module-probe.ts', import.meta.url));
const run = promisify(execFile);

interface Probe {
  readonly status: number;
  readonly otel: readonly { readonly url: string; readonly from: string }[];
}

/** The SDK's modules and the gateway's own imports of any OpenTelemetry package. */
const ours = (probe: Probe): string[] =>
  probe.otel
    .filter(({ url, from }) => !url.includes('/@opentelemetry/api/') || !from.includes('/node_modules/'))
    .map(({ url, from }) => `${url} <- ${from}`);

async function probe(tracingToml: string | undefined): Promise<Probe> {
  // The timeout kills the process (SIGKILL) on every path where it does not end by itself.
  const { stdout } = await run(process.execPath, [PROBE, ...(tracingToml === undefined ? [] : [tracingToml])], {
    timeout: 90_000,
    killSignal: 'SIGKILL',
    cwd: fileURLToPath(new URL('../../..', import.meta.url)),
  });
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as Probe;
}

test('without [tracing] no OpenTelemetry SDK module is loaded nor imported by the gateway; with it the SDK and the exporter are', async () => {
  const off = await probe(undefined);
  assert.equal(off.status, 200);
  assert.deepEqual(ours(off), [], 'no OpenTelemetry SDK module, and no import of one by the gateway, with tracing off');

  const receiver = await startOtlpReceiver();
  try {
    const on = await probe(`[tracing]\notlp_endpoint = "${receiver.url}"`);
    assert.equal(on.status, 200);
    const loaded = ours(on);
    assert.ok(
      loaded.some((line) => line.includes('/@opentelemetry/sdk-trace/') && line.includes('/src/tracing/')),
      `the gateway loaded the SDK: ${loaded.slice(0, 3).join(', ')}`,
    );
    assert.ok(loaded.some((line) => line.includes('/@opentelemetry/exporter-trace-otlp-http/')));
    // Stopping the gateway flushed its spans: the receiver has the request's.
    assert.ok(
      receiver.spans.some((s) => s.service === 'switchyard' && s.kind === 2),
      'the default service name, and the request span exported on stop',
    );
  } finally {
    await receiver.close();
  }
});
