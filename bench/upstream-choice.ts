// Why the benchmark's upstream is bench/upstream.ts and not the simulator: both measured direct,
// alternating, with the same load. `node bench/upstream-choice.ts [seconds]` prints a table.
// The sim runs as `switchyard sim` with ttft 0 and a very high token rate (its fastest setting).

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pickTool, runLoad } from './load.ts';
import { clockTicksPerSecond, cpuSeconds } from './proc-stats.ts';
import { CLI, startChild, startNodeScript, type Child } from './processes.ts';
import { workloads, writeBodies } from './workloads.ts';
import { BENCH_MODEL, SSE_CHUNKS } from './upstream.ts';

const SIM_FLEET = `[[node]]
name = "fast"
kind = "vllm"
ttft = "0ms"
tokens_per_second = 1000000
slots = 1024
models = ["${BENCH_MODEL}"]
`;

async function main(): Promise<void> {
  const seconds = Number(process.argv[2] ?? 3);
  const tool = pickTool(undefined);
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-bench-choice-'));
  const children: Child[] = [];
  try {
    await writeFile(join(dir, 'fleet.toml'), SIM_FLEET);
    const minimal = await startNodeScript('bench/upstream.ts');
    children.push(minimal);
    const sim = await startChild({
      command: process.execPath,
      args: [CLI, 'sim', '--config', join(dir, 'fleet.toml')],
      isReady: (l) => l.includes('"sim ready"'),
    });
    children.push(sim);
    const simNodes = sim.ready.nodes as { url: string }[] | undefined;
    const simUrl = simNodes?.[0]?.url;
    if (simUrl === undefined) throw new Error('sim announced no node');
    // SSE_CHUNKS tokens from the sim too: max_tokens sets the stream length.
    const list = workloads(SSE_CHUNKS).filter((w) => w.name !== 'body10k');
    const bodies = await writeBodies(dir, list);
    const ticks = clockTicksPerSecond();
    const rows: string[] = [
      '| upstream | workload | conc. | req/s | p50 ms | p99 ms | upstream CPU µs/req |',
      '|---|---|---:|---:|---:|---:|---:|',
    ];
    for (const w of list) {
      for (const connections of [1, 64]) {
        for (const [name, url, pid] of [
          ['bench/upstream.ts', String(minimal.ready.url), minimal.pid],
          ['switchyard sim', simUrl, sim.pid],
        ] as const) {
          const bodyFile = bodies.get(w.name) ?? '';
          const spec = { url: new URL(w.path, url).toString(), bodyFile, connections };
          await runLoad(tool, { ...spec, durationS: 1 });
          const before = cpuSeconds(pid, ticks);
          const r = await runLoad(tool, { ...spec, durationS: seconds });
          const cpuUs = ((cpuSeconds(pid, ticks) - before) / Math.max(1, r.requests)) * 1e6;
          rows.push(
            `| ${name} | ${w.name} | ${connections} | ${Math.round(r.requestsPerSecond)} | ${r.latencyMs.p50.toFixed(3)} | ${r.latencyMs.p99.toFixed(3)} | ${cpuUs.toFixed(0)} |`,
          );
        }
      }
    }
    process.stdout.write(`${rows.join('\n')}\n`);
  } finally {
    for (const child of children) await child.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) await main();
