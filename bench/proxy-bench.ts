// The end-to-end part: each workload × concurrency is measured against every target in turn
// (direct, switchyard, nginx, then again per round), each with a short warm-up, while the proxy
// and the upstream processes are measured from outside through /proc.

import { measureFirstChunk, type FirstChunkResult } from './first-chunk.ts';
import { runLoad, type LoadTool } from './load.ts';
import { groupMemory, machineBusySeconds, resetGroupPeak, sample, type ProcessGroup } from './proc-stats.ts';
import { MB, median } from './stats.ts';
import type { Workload, WorkloadName } from './workloads.ts';

/**
 * `candidate`: a second gateway checkout (`--candidate DIR`), to measure a change in the same run.
 * `bare`: the reference proxy of bench/bare-proxy.ts (node:http + one undici Pool, nothing else).
 * `switchyard-wN` / `nginx-wN`: `[server] workers = N` against nginx `worker_processes N` (bench/workers-bench.ts).
 */
export type TargetName =
  'direct' | 'switchyard' | 'candidate' | 'bare' | 'nginx' | 'haproxy' | 'portkey' | `switchyard-w${number}` | `nginx-w${number}`;

export interface Target {
  readonly name: TargetName;
  readonly url: string;
  /** The proxy's processes; undefined for direct (no proxy). */
  readonly proxy: ProcessGroup | undefined;
  /** Headers its requests carry (Portkey's provider and upstream); none for the others. */
  readonly headers?: Readonly<Record<string, string>>;
}

export interface Measurement {
  readonly workload: WorkloadName;
  readonly concurrency: number;
  readonly target: TargetName;
  readonly requests: number;
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly errors: number;
  /** CPU time of the proxy process(es) per request, µs; undefined for direct. */
  readonly proxyCpuUsPerRequest: number | undefined;
  /** Share of one core the proxy used during the run, %. */
  readonly proxyCpuPercent: number | undefined;
  /** Peak RSS of the proxy process(es) during the run (or its lifetime if it cannot be reset), MB. */
  readonly proxyPeakRssMB: number | undefined;
  /** 'run' when VmHWM could be reset before the run, else the process's lifetime peak. */
  readonly peakRssScope: 'run' | 'lifetime';
  readonly upstreamCpuUsPerRequest: number;
  readonly upstreamCpuPercent: number;
  readonly loadGeneratorCpuPercent: number;
  /** Machine CPU used by anything else during the run (other processes), % of one core: noise. */
  readonly otherCpuPercent: number;
}

export interface ProxyBenchOptions {
  readonly tool: LoadTool;
  readonly targets: readonly Target[];
  readonly upstream: ProcessGroup;
  readonly workloads: readonly Workload[];
  readonly bodyFiles: ReadonlyMap<WorkloadName, string>;
  readonly concurrencies: readonly number[];
  readonly durationS: number;
  readonly warmupS: number;
  readonly rounds: number;
  readonly ticksPerSecond: number;
  readonly log: (line: string) => void;
}

export async function runProxyBench(options: ProxyBenchOptions): Promise<Measurement[]> {
  const all: Measurement[] = [];
  for (const workload of options.workloads) {
    const bodyFile = options.bodyFiles.get(workload.name);
    if (bodyFile === undefined) throw new Error(`no body file for ${workload.name}`);
    for (const concurrency of options.concurrencies) {
      for (let round = 0; round < options.rounds; round += 1) {
        for (const target of options.targets) {
          const m = await measureOne(options, target, workload, bodyFile, concurrency);
          all.push(m);
          options.log(
            `  ${workload.name.padEnd(8)} c=${String(concurrency).padEnd(3)} ${target.name.padEnd(10)} ` +
              `${m.requestsPerSecond.toFixed(0).padStart(6)} req/s  p50 ${m.p50Ms.toFixed(3)} ms  p99 ${m.p99Ms.toFixed(3)} ms` +
              `  (other load ${m.otherCpuPercent.toFixed(0)}%)` +
              (m.errors > 0 ? `  ERRORS ${m.errors}` : ''),
          );
        }
      }
    }
  }
  return all;
}

async function measureOne(
  options: ProxyBenchOptions,
  target: Target,
  workload: Workload,
  bodyFile: string,
  concurrency: number,
): Promise<Measurement> {
  const url = new URL(workload.path, target.url).toString();
  const spec = { url, bodyFile, connections: concurrency, headers: target.headers };
  if (options.warmupS > 0) await runLoad(options.tool, { ...spec, durationS: options.warmupS });
  const proxy = target.proxy;
  const peakWasReset = proxy !== undefined && resetGroupPeak(proxy);
  const proxyBefore = proxy === undefined ? undefined : sample(proxy, options.ticksPerSecond);
  const upstreamBefore = sample(options.upstream, options.ticksPerSecond);
  const machineBefore = machineBusySeconds(options.ticksPerSecond);
  const load = await runLoad(options.tool, { ...spec, durationS: options.durationS });
  const machineAfter = machineBusySeconds(options.ticksPerSecond);
  const upstreamAfter = sample(options.upstream, options.ticksPerSecond);
  const proxyAfter = proxy === undefined ? undefined : sample(proxy, options.ticksPerSecond);
  const requests = Math.max(1, load.requests);
  const wallS = (upstreamAfter.atMs - upstreamBefore.atMs) / 1000;
  const upstreamCpu = upstreamAfter.cpuSeconds - upstreamBefore.cpuSeconds;
  const proxyCpu =
    proxyBefore === undefined || proxyAfter === undefined ? undefined : proxyAfter.cpuSeconds - proxyBefore.cpuSeconds;
  const memory = proxy === undefined ? undefined : groupMemory(proxy);
  return {
    workload: workload.name,
    concurrency,
    target: target.name,
    requests: load.requests,
    requestsPerSecond: load.requestsPerSecond,
    p50Ms: load.latencyMs.p50,
    p99Ms: load.latencyMs.p99,
    errors: load.errors,
    proxyCpuUsPerRequest: proxyCpu === undefined ? undefined : (proxyCpu / requests) * 1e6,
    proxyCpuPercent: proxyCpu === undefined ? undefined : (proxyCpu / wallS) * 100,
    proxyPeakRssMB: memory === undefined ? undefined : memory.peakRssBytes / MB,
    peakRssScope: peakWasReset ? 'run' : 'lifetime',
    upstreamCpuUsPerRequest: (upstreamCpu / requests) * 1e6,
    upstreamCpuPercent: (upstreamCpu / wallS) * 100,
    loadGeneratorCpuPercent: (load.loadGeneratorCpuSeconds / wallS) * 100,
    otherCpuPercent: Math.max(
      0,
      ((machineAfter - machineBefore - upstreamCpu - (proxyCpu ?? 0) - load.loadGeneratorCpuSeconds) / wallS) * 100,
    ),
  };
}

/** Median of each field over the rounds of one (workload, concurrency, target). */
export function summarize(measurements: readonly Measurement[]): Measurement[] {
  const groups = new Map<string, Measurement[]>();
  for (const m of measurements) {
    const key = `${m.workload}|${m.concurrency}|${m.target}`;
    groups.set(key, [...(groups.get(key) ?? []), m]);
  }
  return [...groups.values()].map((runs) => {
    const first = runs[0];
    if (first === undefined) throw new Error('empty group');
    const med = (pick: (m: Measurement) => number | undefined): number | undefined => {
      const values = runs.map(pick).filter((v): v is number => v !== undefined);
      return values.length === 0 ? undefined : median(values);
    };
    return {
      ...first,
      requests: med((m) => m.requests) ?? 0,
      requestsPerSecond: med((m) => m.requestsPerSecond) ?? 0,
      p50Ms: med((m) => m.p50Ms) ?? 0,
      p99Ms: med((m) => m.p99Ms) ?? 0,
      errors: runs.reduce((sum, m) => sum + m.errors, 0),
      proxyCpuUsPerRequest: med((m) => m.proxyCpuUsPerRequest),
      proxyCpuPercent: med((m) => m.proxyCpuPercent),
      proxyPeakRssMB: runs.reduce<number | undefined>(
        (max, m) => (m.proxyPeakRssMB === undefined ? max : Math.max(max ?? 0, m.proxyPeakRssMB)),
        undefined,
      ),
      upstreamCpuUsPerRequest: med((m) => m.upstreamCpuUsPerRequest) ?? 0,
      upstreamCpuPercent: med((m) => m.upstreamCpuPercent) ?? 0,
      loadGeneratorCpuPercent: med((m) => m.loadGeneratorCpuPercent) ?? 0,
      otherCpuPercent: med((m) => m.otherCpuPercent) ?? 0,
    };
  });
}

/** SSE time to first chunk at concurrency 1, targets alternating, `rounds` passes. */
export async function runFirstChunkBench(
  targets: readonly Target[],
  workload: Workload,
  durationMs: number,
  rounds: number,
): Promise<Map<TargetName, FirstChunkResult>> {
  const runs = new Map<TargetName, FirstChunkResult[]>();
  for (let round = 0; round < rounds; round += 1) {
    for (const target of targets) {
      const result = await measureFirstChunk(target.url, workload.path, workload.body, durationMs);
      runs.set(target.name, [...(runs.get(target.name) ?? []), result]);
    }
  }
  const out = new Map<TargetName, FirstChunkResult>();
  for (const [name, results] of runs) {
    out.set(name, {
      samples: results.reduce((s, r) => s + r.samples, 0),
      p50Ms: median(results.map((r) => r.p50Ms)),
      p99Ms: median(results.map((r) => r.p99Ms)),
    });
  }
  return out;
}
