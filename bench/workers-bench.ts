// The `[server] workers` rows: Switchyard with `workers = N` against nginx with `worker_processes N`,
// in front of the same upstream, JSON at c=1 (what the admission's message hop adds) and c=64, SSE
// at c=64; plus the admit round trip itself (bench/workers-roundtrip.ts: threads vs processes).
// A one-worker gateway (`switchyard-w1`) is measured in the same rounds, back to back with the
// N-worker one: the ratio between them is judged only when the other load of the two cells is
// alike (a 0.19× of 2026-12-08 was a cell under 139 % other load against one under 1 %).

import { checkTarget } from './first-chunk.ts';
import { startNginx } from './nginx.ts';
import { proxyGatewayConfig, startGateway, startNodeScript } from './processes.ts';
import { runProxyBench, summarize, type Measurement, type Target, type TargetName } from './proxy-bench.ts';
import type { ProcessGroup } from './proc-stats.ts';
import type { LoadTool } from './load.ts';
import type { TargetCheck } from './report.ts';
import { round } from './stats.ts';
import type { Workload, WorkloadName } from './workloads.ts';
import type { RoundTripFigures } from './workers-roundtrip.ts';

export interface WorkersBenchOptions {
  readonly workers: number;
  readonly tool: LoadTool;
  readonly upstreamUrl: string;
  readonly upstream: ProcessGroup;
  readonly workloads: readonly Workload[];
  readonly bodyFiles: ReadonlyMap<WorkloadName, string>;
  readonly durationS: number;
  readonly warmupS: number;
  readonly rounds: number;
  readonly ticksPerSecond: number;
  readonly withNginx: boolean;
  readonly nodeFlags: readonly string[];
  readonly log: (line: string) => void;
}

export interface WorkersBenchResult {
  readonly rows: Measurement[];
  readonly roundTrip: Readonly<Record<string, RoundTripFigures>> | undefined;
}

export async function runWorkersBench(options: WorkersBenchOptions): Promise<WorkersBenchResult> {
  const n = options.workers;
  const children: { stop(): Promise<void> }[] = [];
  try {
    // The one-worker gateway again, beside the N-worker one: each round measures both back to back, so
    // their ratio is taken under the same other load (the main table's rows ran minutes earlier).
    const single = await startGateway(proxyGatewayConfig(options.upstreamUrl, 1), { nodeFlags: options.nodeFlags });
    children.push(single);
    const gateway = await startGateway(proxyGatewayConfig(options.upstreamUrl, n), { nodeFlags: options.nodeFlags });
    children.push(gateway);
    // One pid: the worker threads live in the gateway's process, so /proc counts their CPU and RSS with it.
    const targets: Target[] = [
      { name: 'switchyard-w1', url: single.url, proxy: { pids: () => [single.pid] } },
      { name: `switchyard-w${n}`, url: gateway.url, proxy: { pids: () => [gateway.pid] } },
    ];
    if (options.withNginx) {
      const nginx = await startNginx(options.upstreamUrl, n);
      children.push(nginx);
      targets.push({ name: `nginx-w${n}`, url: nginx.url, proxy: { pids: () => nginx.pids() } });
    }
    // The same shape check as the main targets: HTTP 200 and a whole answer, before any load.
    for (const target of targets) for (const w of options.workloads) await checkTarget(target.url, w.path, w.body, w.sseChunks);
    const common = {
      tool: options.tool,
      targets,
      upstream: options.upstream,
      bodyFiles: options.bodyFiles,
      durationS: options.durationS,
    };
    const more = { warmupS: options.warmupS, rounds: options.rounds, ticksPerSecond: options.ticksPerSecond, log: options.log };
    const json = options.workloads.filter((w) => w.name === 'json');
    const sse = options.workloads.filter((w) => w.name === 'sse');
    const raw = [
      ...(await runProxyBench({ ...common, ...more, workloads: json, concurrencies: [1, 64] })),
      ...(await runProxyBench({ ...common, ...more, workloads: sse, concurrencies: [64] })),
    ];
    for (const child of children.splice(0).reverse()) await child.stop();
    const probe = await startNodeScript('bench/workers-roundtrip.ts');
    const roundTrip = probe.ready.results as Record<string, RoundTripFigures> | undefined;
    await probe.stop();
    return { rows: summarize(raw), roundTrip };
  } finally {
    for (const child of children.reverse()) await child.stop().catch(() => {});
  }
}

/** Two cells whose other load differs by more than this (% of one core) are not compared. */
export const OTHER_LOAD_APART_PERCENT = 50;

/** What the workers rows show against the one-worker rows (measured beside them) and against nginx with as many workers. */
export function workersChecks(rows: readonly Measurement[], n: number): TargetCheck[] {
  const find = (target: TargetName, workload: string, concurrency: number): Measurement | undefined =>
    rows.find((r) => r.target === target && r.workload === workload && r.concurrency === concurrency);
  const checks: TargetCheck[] = [];
  for (const workload of ['json', 'sse']) {
    const many = find(`switchyard-w${n}`, workload, 64);
    const one = find('switchyard-w1', workload, 64) ?? find('switchyard', workload, 64);
    const nginx = find(`nginx-w${n}`, workload, 64);
    if (many === undefined) continue;
    if (one !== undefined) {
      const gain = many.requestsPerSecond / one.requestsPerSecond;
      const measured = `${round(gain)} × (${round(many.requestsPerSecond)} vs ${round(one.requestsPerSecond)} req/s; CPU ${round(many.proxyCpuPercent ?? 0)} % vs ${round(one.proxyCpuPercent ?? 0)} % of a core)`;
      const apart = Math.abs(many.otherCpuPercent - one.otherCpuPercent);
      const goal = `cores used: workers = ${n} vs 1, c=64, ${workload}: throughput scales (> 1 ×)`;
      // On 2 cores, other work takes the CPU the gateway would use: a ratio across unequal loads measures the load.
      if (apart > OTHER_LOAD_APART_PERCENT)
        checks.push({
          goal,
          measured: `not judged: other load ${round(many.otherCpuPercent)} % vs ${round(one.otherCpuPercent)} % of a core; ${measured}`,
          met: undefined,
        });
      else checks.push({ goal, measured, met: gain > 1 });
    }
    const goal = `throughput, c=64, ${workload}, workers = ${n}: ≥ ${workload === 'json' ? '0.5' : '0.8'} × nginx worker_processes ${n}`;
    if (nginx === undefined) {
      checks.push({ goal, measured: 'nginx not installed', met: undefined });
      continue;
    }
    const ratio = many.requestsPerSecond / nginx.requestsPerSecond;
    checks.push({
      goal,
      measured: `${round(ratio)} × (${round(many.requestsPerSecond)} vs ${round(nginx.requestsPerSecond)} req/s)`,
      met: ratio >= (workload === 'json' ? 0.5 : 0.8),
    });
  }
  return checks;
}
