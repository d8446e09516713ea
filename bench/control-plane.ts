// The control plane at scale: a real gateway process health-checks and lists the models of 1,000
// nodes (one lightweight fleet-server process, one port per node) every 2 s, with no client
// traffic; we measure the gateway's CPU and memory from outside. Then, still polling, the gateway
// proxies JSON requests to one more node (the benchmark upstream, the only one serving the model):
// what a request costs in a big fleet, next to the one-node numbers of the proxy table.

import { cpuSeconds, machineBusySeconds, memory, resetPeak } from './proc-stats.ts';
import { sleepMs, startGateway, startNodeScript } from './processes.ts';
import { runLoad, type LoadTool } from './load.ts';
import { MB } from './stats.ts';
import { CONCURRENCIES } from './workloads.ts';

export interface ControlPlaneOptions {
  readonly nodes: number;
  readonly modelsPerNode: number;
  readonly intervalS: number;
  readonly warmupS: number;
  readonly measureS: number;
  readonly ticksPerSecond: number;
  /** Another checkout's gateway (the `candidate`); default this one. */
  readonly root?: string;
  /** Node flags for the gateway process (e.g. heap sizes to compare). */
  readonly nodeFlags?: readonly string[];
  /** Environment of the gateway process beside the bench's (e.g. glibc's MALLOC_* settings to compare). */
  readonly env?: Readonly<Record<string, string>>;
  readonly label: string;
  /** With these, the requests under scale are measured too. */
  readonly load?: { readonly tool: LoadTool; readonly jsonBodyFile: string; readonly durationS: number };
}

export interface RequestsUnderScale {
  readonly concurrency: number;
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly errors: number;
}

export interface ControlPlaneResult {
  readonly label: string;
  readonly nodes: number;
  readonly modelsPerNode: number;
  readonly intervalS: number;
  readonly measuredS: number;
  /** Gateway CPU seconds per wall second, as % of one core. */
  readonly cpuPercent: number;
  /** Gateway CPU per node poll (one health probe or one model listing), µs. */
  readonly cpuUsPerPoll: number;
  readonly rssMB: number;
  /** Peak RSS during the measured window. */
  readonly windowPeakRssMB: number;
  /** Peak RSS over the process's life, startup (first round of 2 × N requests at once) included. */
  readonly lifetimePeakRssMB: number;
  /**
   * V8 heap in use, sampled from /metrics every 500 ms in the window: the lowest sample (just after
   * a collection, close to the live data) and the highest.
   */
  readonly heapUsedMinMB?: number;
  readonly heapUsedMaxMB?: number;
  /** Requests the fleet saw per second during the window (health probes, model listings). */
  readonly healthPerSecond: number;
  readonly modelsPerSecond: number;
  /** New TCP connections the gateway opened to the fleet per second (0 when keep-alive holds). */
  readonly connectionsPerSecond: number;
  /** From the gateway's /health at the end. */
  readonly healthyNodes: number;
  readonly nodesWithModels: number;
  /** Machine CPU used by other processes during the window, % of one core: noise. */
  readonly otherCpuPercent: number;
  /** JSON requests proxied to the one serving node while the 1,000 are polled. */
  readonly underScale: readonly RequestsUnderScale[];
}

interface FleetCounts {
  health: number;
  models: number;
  connections: number;
}

export function controlPlaneConfig(urls: readonly string[], intervalS: number, upstreamUrl?: string): string {
  const lines = [
    '[server]',
    'listen = "127.0.0.1:0"',
    '[health]',
    `interval = "${intervalS}s"`,
    'timeout = "1s"',
    '[discovery]',
    `interval = "${intervalS}s"`,
    'timeout = "2s"',
  ];
  if (upstreamUrl !== undefined) lines.push('[[nodes]]', 'name = "upstream"', `url = "${upstreamUrl}"`, 'kind = "vllm"');
  urls.forEach((url, i) => lines.push('[[nodes]]', `name = "n${i}"`, `url = "${url}"`, 'kind = "vllm"'));
  return `${lines.join('\n')}\n`;
}

export async function runControlPlaneBench(options: ControlPlaneOptions): Promise<ControlPlaneResult> {
  const fleet = await startNodeScript('bench/fleet-server.ts', [
    '--nodes',
    String(options.nodes),
    '--models',
    String(options.modelsPerNode),
  ]);
  const upstream = options.load === undefined ? undefined : await startNodeScript('bench/upstream.ts');
  try {
    const urls = fleet.ready.urls;
    const statsUrl = fleet.ready.stats;
    if (!Array.isArray(urls) || typeof statsUrl !== 'string') throw new Error('fleet server announced no urls');
    const upstreamUrl = upstream === undefined ? undefined : String(upstream.ready.url);
    const config = controlPlaneConfig(urls.map(String), options.intervalS, upstreamUrl);
    const gateway = await startGateway(config, {
      ...(options.root === undefined ? {} : { root: options.root }),
      nodeFlags: options.nodeFlags ?? [],
      env: { ...options.env },
    });
    try {
      await sleepMs(options.warmupS * 1000);
      const lifetimePeak = memory(gateway.pid).peakRssBytes;
      resetPeak(gateway.pid);
      const countsBefore = (await (await fetch(statsUrl)).json()) as FleetCounts;
      const cpuBefore = cpuSeconds(gateway.pid, options.ticksPerSecond);
      const fleetBefore = cpuSeconds(fleet.pid, options.ticksPerSecond);
      const machineBefore = machineBusySeconds(options.ticksPerSecond);
      const started = performance.now();
      const heap = await sampleHeap(gateway.url, options.measureS * 1000);
      const cpuAfter = cpuSeconds(gateway.pid, options.ticksPerSecond);
      const fleetCpu = cpuSeconds(fleet.pid, options.ticksPerSecond) - fleetBefore;
      const machineBusy = machineBusySeconds(options.ticksPerSecond) - machineBefore;
      const measuredS = (performance.now() - started) / 1000;
      const countsAfter = (await (await fetch(statsUrl)).json()) as FleetCounts;
      const mem = memory(gateway.pid);
      const health = (await (await fetch(`${gateway.url}/health`)).json()) as { healthy: number; models_ok: number };
      const polls = countsAfter.health - countsBefore.health + (countsAfter.models - countsBefore.models);
      const cpu = cpuAfter - cpuBefore;
      const underScale: RequestsUnderScale[] = [];
      if (options.load !== undefined && upstreamUrl !== undefined) {
        for (const connections of CONCURRENCIES) {
          const spec = { url: `${gateway.url}/v1/chat/completions`, bodyFile: options.load.jsonBodyFile, connections };
          await runLoad(options.load.tool, { ...spec, durationS: 1 });
          const r = await runLoad(options.load.tool, { ...spec, durationS: options.load.durationS });
          underScale.push({
            concurrency: connections,
            requestsPerSecond: r.requestsPerSecond,
            p50Ms: r.latencyMs.p50,
            p99Ms: r.latencyMs.p99,
            errors: r.errors,
          });
        }
      }
      return {
        label: options.label,
        nodes: options.nodes,
        modelsPerNode: options.modelsPerNode,
        intervalS: options.intervalS,
        measuredS,
        cpuPercent: (cpu / measuredS) * 100,
        cpuUsPerPoll: polls > 0 ? (cpu / polls) * 1e6 : 0,
        rssMB: mem.rssBytes / MB,
        windowPeakRssMB: mem.peakRssBytes / MB,
        lifetimePeakRssMB: Math.max(lifetimePeak, mem.peakRssBytes) / MB,
        heapUsedMinMB: heap.min / MB,
        heapUsedMaxMB: heap.max / MB,
        healthPerSecond: (countsAfter.health - countsBefore.health) / measuredS,
        modelsPerSecond: (countsAfter.models - countsBefore.models) / measuredS,
        connectionsPerSecond: (countsAfter.connections - countsBefore.connections) / measuredS,
        healthyNodes: health.healthy,
        nodesWithModels: health.models_ok,
        otherCpuPercent: Math.max(0, ((machineBusy - cpu - fleetCpu) / measuredS) * 100),
        underScale,
      };
    } finally {
      await gateway.stop();
    }
  } finally {
    await upstream?.stop();
    await fleet.stop();
  }
}

/** Samples the gateway's V8 heap in use (prom-client's default metric) for `durationMs`. */
async function sampleHeap(gatewayUrl: string, durationMs: number): Promise<{ min: number; max: number }> {
  let min = Infinity;
  let max = 0;
  const end = performance.now() + durationMs;
  while (performance.now() < end) {
    await sleepMs(500);
    const text = await (await fetch(`${gatewayUrl}/metrics`)).text();
    const used = /^gateway_process_nodejs_heap_size_used_bytes (\S+)$/m.exec(text)?.[1];
    if (used === undefined) continue;
    min = Math.min(min, Number(used));
    max = Math.max(max, Number(used));
  }
  return { min: Number.isFinite(min) ? min : 0, max };
}

// Standalone: `node bench/control-plane.ts --nodes 1000 [--flags="--max-old-space-size=96"] [--root ../other]` prints
// one JSON result (no requests under scale), for comparing heap flags and fleet sizes.
if (import.meta.main) {
  const { parseArgs } = await import('node:util');
  const { values } = parseArgs({
    options: {
      nodes: { type: 'string', default: '1000' },
      flags: { type: 'string', default: '' },
      measure: { type: 'string', default: '12' },
      root: { type: 'string' },
      // Space-separated NAME=VALUE pairs for the gateway's environment (e.g. "MALLOC_ARENA_MAX=2").
      env: { type: 'string', default: '' },
    },
  });
  const { clockTicksPerSecond } = await import('./proc-stats.ts');
  const result = await runControlPlaneBench({
    nodes: Number(values.nodes),
    modelsPerNode: 50,
    intervalS: 2,
    warmupS: 8,
    measureS: Number(values.measure),
    ticksPerSecond: clockTicksPerSecond(),
    label: `${values.root ?? 'switchyard'}${values.flags === '' ? '' : ` ${values.flags}`}${values.env === '' ? '' : ` ${values.env}`}`,
    ...(values.root === undefined ? {} : { root: values.root }),
    nodeFlags: values.flags.split(' ').filter((f) => f !== ''),
    env: Object.fromEntries(
      values.env
        .split(' ')
        .filter((pair) => pair.includes('='))
        .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
    ),
  });
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
