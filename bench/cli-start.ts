// The lean-process rows (issue 28): how long `switchyard --version`, `--help`, `check-config` and
// `status` take from spawn to exit, with their peak RSS; how long `serve` with 10 nodes takes to
// listen; and the RSS of an idle `serve` with one node and no [mesh]. Each command runs `runs`
// times, the median is reported; a bare `node -e 0` is the floor beside them.
// Alone: `node bench/cli-start.ts [RUNS]` prints one JSON line.

import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { memory } from './proc-stats.ts';
import { CLI, proxyGatewayConfig, REPO_ROOT, startGateway, startNodeScript, withHeapFlags } from './processes.ts';
import { median, MB } from './stats.ts';

export interface CliStartRow {
  readonly command: string;
  readonly medianMs: number;
  readonly maxMs: number;
  /** Peak RSS of the process (its own getrusage at exit), MB. */
  readonly peakRssMB: number;
  readonly runs: number;
}

export interface LeanProcessResult {
  readonly cli: readonly CliStartRow[];
  /** `serve` with 10 nodes: spawn → "gateway listening", ms (median). */
  readonly serveReadyMs: number;
  /** An idle `serve`, one node, no [mesh], 3 s after it listens: VmRSS, MB. */
  readonly idleServeRssMB: number;
}

/** The preload that reports the process's peak RSS on exit (to fd 2, one marked line). */
const RSS_PROBE = pathToFileURL(join(REPO_ROOT, 'bench/exit-rss-probe.mjs')).href;

function timeOnce(args: readonly string[]): Promise<{ ms: number; maxRssKB: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [...args], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, NODE_OPTIONS: `--import=${RSS_PROBE}` },
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('close', () => {
      clearTimeout(timer);
      const ms = performance.now() - started;
      const kb = Number(/BENCH_MAXRSS_KB (\d+)/.exec(stderr)?.[1] ?? 'NaN');
      resolve({ ms, maxRssKB: kb });
    });
  });
}

async function timeCommand(label: string, args: readonly string[], runs: number): Promise<CliStartRow> {
  const samples: { ms: number; maxRssKB: number }[] = [];
  for (let i = 0; i < runs; i += 1) samples.push(await timeOnce(args));
  return {
    command: label,
    medianMs: median(samples.map((s) => s.ms)),
    maxMs: Math.max(...samples.map((s) => s.ms)),
    peakRssMB: (median(samples.map((s) => s.maxRssKB)) * 1024) / MB,
    runs,
  };
}

export async function runLeanProcessBench(runs: number): Promise<LeanProcessResult> {
  const upstream = await startNodeScript('bench/upstream.ts');
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-bench-cli-'));
  try {
    const upstreamUrl = String(upstream.ready.url);
    const config = join(dir, 'switchyard.toml');
    await writeFile(config, proxyGatewayConfig(upstreamUrl));
    const cli: CliStartRow[] = [
      await timeCommand('node -e 0 (the floor)', ['-e', '0'], runs),
      await timeCommand('--version', [CLI, '--version'], runs),
      await timeCommand('--help', [CLI, '--help'], runs),
      await timeCommand('check-config', [CLI, 'check-config', config], runs),
      await timeCommand('status (gateway down)', [CLI, 'status', '--url', 'http://127.0.0.1:1'], runs),
    ];
    const tenNodes = Array.from({ length: 10 }, (_, i) =>
      ['[[nodes]]', `name = "n${i}"`, `url = "${upstreamUrl}"`, 'kind = "vllm"'].join('\n'),
    ).join('\n');
    const tenNodesToml = proxyGatewayConfig(upstreamUrl).replace(/\[\[nodes\]\][\s\S]*$/, `${tenNodes}\n`);
    const ready: number[] = [];
    for (let i = 0; i < runs; i += 1) {
      const started = performance.now();
      const gateway = await startGateway(tenNodesToml);
      ready.push(performance.now() - started);
      await gateway.stop();
    }
    const idle = await startGateway(proxyGatewayConfig(upstreamUrl));
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const idleServeRssMB = memory(idle.pid).rssBytes / MB;
    await idle.stop();
    return { cli, serveReadyMs: median(ready), idleServeRssMB };
  } finally {
    await upstream.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/** The heap flags `startGateway` passes, for the notes. */
export const SERVE_FLAGS = withHeapFlags([]).join(' ');

if (import.meta.main) {
  const result = await runLeanProcessBench(Number(process.argv[2] ?? '5'));
  process.stdout.write(`${JSON.stringify({ event: 'lean process', ...result })}\n`);
}
