// Issue 39, product question 1: what asking a stream for its usage costs the gateway per streamed
// request. One upstream (bench/upstream.ts --usage-nulls: asked, it answers as vLLM and OpenAI do,
// `"usage":null` on every chunk and a usage chunk before [DONE]; unasked, the plain stream), and
// two ways through one gateway, measured in turn each round as gateway CPU per request
// (utime+stime from /proc, as bench/request-cpu.ts):
//   asked         a vLLM-kind node, the client does not ask: the gateway adds `include_usage`, then
//                 frames the stream and takes out the nulls and the usage chunk (usage-strip.ts)
//   client-asked  the same gateway, the client asks itself: the stream passes untouched, its usage
//                 chunk read as it passes (usage-watch.ts); the client gets the nulls and the usage
//                 chunk too (~480 more bytes over 20 chunks)
// (A llamacpp-kind node, never asked, is no clean third way: its prompts are sized by the node's
// tokenizer, a call per request. bench/stream-usage-readers.ts times the readers in process.)
//
//   node bench/stream-usage-cost.ts [--connections 16] [--duration 3] [--rounds 5] [--tool wrk|autocannon]
//
// Prints one JSON line: per way, CPU µs per request and req/s per round and their medians.

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { pickTool, runLoad } from './load.ts';
import { clockTicksPerSecond, cpuSeconds } from './proc-stats.ts';
import { startGateway, startNodeScript, type Child, type GatewayChild } from './processes.ts';
import { median } from './stats.ts';
import { BENCH_MODEL, SSE_CHUNKS } from './upstream.ts';

const { values } = parseArgs({
  options: {
    connections: { type: 'string', default: '16' },
    duration: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '5' },
    tool: { type: 'string' },
  },
});

function gatewayConfig(upstreamUrl: string, kind: 'vllm'): string {
  return [
    '[server]',
    'listen = "127.0.0.1:0"',
    '[health]',
    'interval = "1h"',
    '[discovery]',
    'interval = "1h"',
    '[[nodes]]',
    'name = "upstream"',
    `url = "${upstreamUrl}"`,
    `kind = "${kind}"`,
    '',
  ].join('\n');
}

const body = (clientAsks: boolean): string =>
  JSON.stringify({
    model: BENCH_MODEL,
    messages: [{ role: 'user', content: 'Say something short.' }],
    max_tokens: SSE_CHUNKS,
    stream: true,
    ...(clientAsks ? { stream_options: { include_usage: true } } : {}),
  });

interface Way {
  readonly name: 'asked' | 'client-asked';
  readonly gateway: GatewayChild;
  readonly bodyFile: string;
}

interface Round {
  readonly cpuUsPerRequest: number;
  readonly requestsPerSecond: number;
  readonly p99Ms: number;
}

const tool = pickTool(values.tool);
const ticks = clockTicksPerSecond();
const dir = await mkdtemp(join(tmpdir(), 'switchyard-stream-usage-'));
const children: Child[] = [];
try {
  const unasked = join(dir, 'unasked.json');
  const asks = join(dir, 'asks.json');
  await writeFile(unasked, body(false));
  await writeFile(asks, body(true));
  const upstream = await startNodeScript('bench/upstream.ts', ['--usage-nulls']);
  children.push(upstream);
  const upstreamUrl = String(upstream.ready.url);
  const vllm = await startGateway(gatewayConfig(upstreamUrl, 'vllm'));
  children.push(vllm);
  const ways: Way[] = [
    { name: 'asked', gateway: vllm, bodyFile: unasked },
    { name: 'client-asked', gateway: vllm, bodyFile: asks },
  ];
  const connections = Number(values.connections);
  const durationS = Number(values.duration);
  const url = (way: Way): string => new URL('/v1/chat/completions', way.gateway.url).toString();
  // What each way sends the client (one request, read whole).
  const seen: Record<string, number> = {};
  for (const way of ways) {
    const answer = await fetch(url(way), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: body(way.bodyFile === asks),
    });
    const text = await answer.text();
    if (answer.status !== 200) throw new Error(`${way.name}: HTTP ${answer.status}: ${text.slice(0, 200)}`);
    seen[way.name] = Buffer.byteLength(text);
  }
  for (const way of ways) await runLoad(tool, { url: url(way), bodyFile: way.bodyFile, connections, durationS: 1 });
  const rounds = new Map<string, Round[]>(ways.map((w) => [w.name, []]));
  for (let round = 0; round < Number(values.rounds); round += 1) {
    for (const way of ways) {
      const before = cpuSeconds(way.gateway.pid, ticks);
      const load = await runLoad(tool, { url: url(way), bodyFile: way.bodyFile, connections, durationS });
      const used = cpuSeconds(way.gateway.pid, ticks) - before;
      if (load.errors > 0) throw new Error(`${way.name}: ${load.errors} errors`);
      const row = {
        cpuUsPerRequest: (used * 1e6) / load.requests,
        requestsPerSecond: load.requestsPerSecond,
        p99Ms: load.latencyMs.p99,
      };
      rounds.get(way.name)?.push(row);
      process.stderr.write(
        `round ${round} ${way.name}: ${row.cpuUsPerRequest.toFixed(1)} µs CPU/req, ${Math.round(row.requestsPerSecond)} req/s\n`,
      );
    }
  }
  const medians = Object.fromEntries(
    [...rounds].map(([name, list]) => [
      name,
      {
        cpuUsPerRequest: median(list.map((r) => r.cpuUsPerRequest)),
        requestsPerSecond: median(list.map((r) => r.requestsPerSecond)),
      },
    ]),
  );
  process.stdout.write(
    `${JSON.stringify({ event: 'stream usage cost', tool, connections, durationS, chunks: SSE_CHUNKS, clientBytes: seen, medians, rounds: Object.fromEntries(rounds) })}\n`,
  );
} finally {
  for (const child of children.reverse()) await child.stop();
  await rm(dir, { recursive: true, force: true });
}
