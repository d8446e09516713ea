// `node bench/request-log.ts [N]`: the request log's cost per request, in process: building the
// line from a `proxy:request-finished` event and handing it to the writer, which writes batches to
// a file in a temporary directory (rotating at 8 MiB). Reports CPU µs per line (process.cpuUsage,
// the writer's own file writes included) and wall µs per line, building alone and with the writes.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LineWriter } from '#src/logs/line-writer.ts';
import { FileOutput } from '#src/logs/request-log-file.ts';
import { requestLineText } from '#src/logs/request-line.ts';
import type { ProxyEvents } from '#src/proxy/index.ts';

const count = Number(process.argv[2] ?? 200_000);

const event = (i: number): ProxyEvents['proxy:request-finished'] => ({
  endpoint: '/v1/chat/completions',
  model: 'llama-3.1-8b-instruct',
  node: 'gpu-a',
  status: 200,
  durationMs: 812.34 + (i % 7),
  firstByteMs: 41.2,
  brokenError: undefined,
  clientAborted: false,
  tenant: 'team-a',
  usage: { promptTokens: 512, completionTokens: 128, counted: 'usage' },
  detail: {
    requestId: `0af76519-16cd-43dd-8448-${String(i).padStart(12, '0')}`,
    endedAt: Date.now(),
    requestedModel: 'llama',
    servedModel: 'llama-3.1-8b-instruct',
    attempts: [{ target: 'gpu-a', kind: 'node', outcome: 'success', status: 200 }],
    queueWaitMs: 0,
    bytesIn: 2_048,
    bytesOut: 18_432,
    refusal: undefined,
    firstTokenMs: 41.2,
    interTokenMs: 6.1,
  },
});

async function main(): Promise<void> {
  const events = Array.from({ length: 1_000 }, (_, i) => event(i));
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-bench-reqlog-'));
  try {
    // Warm-up.
    for (let i = 0; i < 20_000; i++) requestLineText(events[i % events.length] ?? event(0), 0);

    let cpu = process.cpuUsage();
    let wall = performance.now();
    let bytes = 0;
    for (let i = 0; i < count; i++) bytes += requestLineText(events[i % events.length] ?? event(0), 0).length;
    const buildCpu = process.cpuUsage(cpu);
    const buildWall = performance.now() - wall;

    const writer = new LineWriter(
      new FileOutput(join(dir, 'requests.log'), { maxBytes: 8 * 1024 * 1024, keep: 2 }),
      10_000,
      (error) => {
        throw error;
      },
    );
    cpu = process.cpuUsage();
    wall = performance.now();
    // As requests end: a few lines per tick, the writer's loop batching them; the disk kept up with
    // (a queue past half its bound waits for the writer), so every line is written and counted.
    for (let i = 0; i < count; i += 8) {
      for (let j = i; j < Math.min(count, i + 8); j++) writer.write(requestLineText(events[j % events.length] ?? event(0), 0));
      await new Promise((resolve) => setImmediate(resolve));
      while (writer.figures().queued > 5_000) await new Promise((resolve) => setImmediate(resolve));
    }
    await writer.flushed();
    const writeCpu = process.cpuUsage(cpu);
    const writeWall = performance.now() - wall;
    await writer.close();
    const per = (usage: NodeJS.CpuUsage): string => ((usage.user + usage.system) / count).toFixed(2);
    const figures = writer.figures();
    process.stdout.write(
      [
        `lines: ${count}, ${Math.round(bytes / count)} bytes each`,
        `build only:        CPU ${per(buildCpu)} µs/line, wall ${((buildWall * 1000) / count).toFixed(2)} µs/line`,
        `build + write:     CPU ${per(writeCpu)} µs/line, wall ${((writeWall * 1000) / count).toFixed(2)} µs/line`,
        `written ${figures.written}, dropped ${figures.dropped}`,
      ].join('\n') + '\n',
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
