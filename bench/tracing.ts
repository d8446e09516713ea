// The cost of tracing ([tracing], docs/observability.md): the same gateway process proxying the
// same SSE load without [tracing], with sample_ratio = 0 (spans started, nothing recorded, the
// context still sent on) and with sample_ratio = 1 (every request's spans exported over OTLP/HTTP
// to a sink in this process that reads and discards them). The three gateways run side by side and
// are measured in turn, round after round; the figure is the gateway process's CPU (utime + stime
// from /proc, its exporter included) per request, and the difference to the run without.
// `npm run bench -- --only tracing` runs it alone; it is part of the default run.

import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { runLoad, type LoadTool } from './load.ts';
import { cpuSeconds } from './proc-stats.ts';
import { proxyGatewayConfig, startGateway, type GatewayChild } from './processes.ts';
import { median } from './stats.ts';
import { measureTracingCalls, type TracingCallsResult } from './tracing-calls.ts';

export type TracingVariant = 'off' | 'ratio 0' | 'ratio 1';

export interface TracingBenchRow {
  readonly variant: TracingVariant;
  readonly connections: number;
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  /** The gateway process's CPU per request, µs (median over the rounds). */
  readonly cpuUsPerRequest: number;
  /** Against the run without [tracing], µs of CPU per request. */
  readonly addedCpuUsPerRequest: number;
  /** Spans the sink received per request (0 without tracing and at ratio 0). */
  readonly spansPerRequest: number;
}

export interface TracingBenchResult {
  readonly rows: TracingBenchRow[];
  /** The tracer's own calls per request, in process (bench/tracing-calls.ts). */
  readonly calls: TracingCallsResult[];
}

export interface TracingBenchOptions {
  readonly tool: LoadTool;
  readonly upstreamUrl: string;
  readonly bodyFile: string;
  readonly durationS: number;
  readonly warmupS: number;
  readonly rounds: number;
  readonly ticksPerSecond: number;
  readonly log: (line: string) => void;
}

const CONNECTIONS = 16;

/** An OTLP/HTTP sink: reads each export, counts its spans by the `"spanId"` keys, answers 200. */
async function startSink(): Promise<{ url: string; spans: () => number; close: () => Promise<void> }> {
  let spans = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      spans += Buffer.concat(chunks).toString('utf8').split('"spanId"').length - 1;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`,
    spans: () => spans,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export async function runTracingBench(options: TracingBenchOptions): Promise<TracingBenchResult> {
  const sink = await startSink();
  const tracing = (ratio: number): string => `[tracing]\notlp_endpoint = "${sink.url}"\nsample_ratio = ${ratio}\n`;
  const configs: readonly [TracingVariant, string][] = [
    ['off', ''],
    ['ratio 0', tracing(0)],
    ['ratio 1', tracing(1)],
  ];
  const gateways: [TracingVariant, GatewayChild][] = [];
  try {
    for (const [variant, extra] of configs)
      gateways.push([variant, await startGateway(proxyGatewayConfig(options.upstreamUrl) + extra)]);
    const per = new Map<TracingVariant, { cpu: number[]; rps: number[]; p50: number[]; spans: number[] }>(
      configs.map(([v]) => [v, { cpu: [], rps: [], p50: [], spans: [] }]),
    );
    for (let round = 0; round < options.rounds; round++) {
      for (const [variant, gateway] of gateways) {
        const spec = { url: `${gateway.url}/v1/chat/completions`, bodyFile: options.bodyFile, connections: CONNECTIONS };
        await runLoad(options.tool, { ...spec, durationS: options.warmupS });
        const spansBefore = sink.spans();
        const cpuBefore = cpuSeconds(gateway.pid, options.ticksPerSecond);
        const result = await runLoad(options.tool, { ...spec, durationS: options.durationS });
        const cpu = cpuSeconds(gateway.pid, options.ticksPerSecond) - cpuBefore;
        // The last batch leaves within the export delay (1 s): counted with the next round's, close enough per request.
        const figures = per.get(variant);
        if (figures === undefined || result.requests === 0) continue;
        figures.cpu.push((cpu * 1e6) / result.requests);
        figures.rps.push(result.requestsPerSecond);
        figures.p50.push(result.latencyMs.p50);
        figures.spans.push((sink.spans() - spansBefore) / result.requests);
        options.log(
          `  tracing ${variant}: ${Math.round(result.requestsPerSecond)} req/s, ${((cpu * 1e6) / result.requests).toFixed(1)} µs CPU/request`,
        );
      }
    }
    const base = median(per.get('off')?.cpu ?? []);
    options.log("  tracing: the tracer's own calls, in process (bench/tracing-calls.ts)");
    const calls = await measureTracingCalls(50_000);
    const rows = configs.map(([variant]) => {
      const figures = per.get(variant) ?? { cpu: [], rps: [], p50: [], spans: [] };
      const cpu = median(figures.cpu);
      return {
        variant,
        connections: CONNECTIONS,
        requestsPerSecond: median(figures.rps),
        p50Ms: median(figures.p50),
        cpuUsPerRequest: cpu,
        addedCpuUsPerRequest: cpu - base,
        spansPerRequest: median(figures.spans),
      };
    });
    return { rows, calls };
  } finally {
    for (const [, gateway] of gateways) await gateway.stop().catch(() => {});
    await sink.close();
  }
}

/** The markdown section of the report. */
export function renderTracing(result: TracingBenchResult | undefined): string {
  if (result === undefined) return '';
  const { rows, calls } = result;
  const lines = [
    '',
    `## Tracing cost (SSE, ${rows[0]?.connections ?? CONNECTIONS} connections, gateway process CPU per request)`,
    '',
    '| [tracing] | req/s | p50 ms | CPU µs/request | added CPU µs/request | spans/request |',
    '|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.variant} | ${Math.round(r.requestsPerSecond)} | ${r.p50Ms.toFixed(1)} | ${r.cpuUsPerRequest.toFixed(1)} | ${r.variant === 'off' ? '—' : r.addedCpuUsPerRequest.toFixed(1)} | ${r.spansPerRequest.toFixed(1)} |`,
    ),
    '',
    "The tracer's own calls for one request with one attempt (request span, routing decision, attempt span and its traceparent, the ends), in process, exports to a local sink included:",
    '',
    ...calls.map(
      (c) =>
        `- sample_ratio ${c.ratio}: ${c.cpuUsPerRequest.toFixed(1)} µs CPU per request (${c.exported} spans exported, ${c.dropped} dropped of ${c.requests} requests)`,
    ),
    '',
  ];
  return lines.join('\n');
}
