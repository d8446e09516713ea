// What one request costs each proxy in CPU, in one run: the upstream, the bare stack proxy, this
// checkout's gateway and (with --candidate DIR) another checkout's, each its own process. Every
// round sends the same load to each target in turn (wrk, or autocannon) and reads the target's
// utime+stime from /proc/<pid>/stat before and after; the figure is the median over the rounds of
// CPU µs per request, quoted against bare's. Wall-clock throughput on a busy machine is noise; CPU
// per request is not (much).
//
//   node bench/request-cpu.ts [--candidate DIR] [--workload json|sse|body10k] [--connections 64]
//                             [--duration 3] [--rounds 5] ["--gateway-flags=--cpu-prof --cpu-prof-dir=D"]
//                             [--perf DIR] ["--candidate-flags=--max-semi-space-size=8"]
//                             ["--gateway-env=MALLOC_ARENA_MAX=2"] ["--candidate-env=..."]
//
// --candidate-flags: the candidate's Node flags instead of --gateway-flags (with --candidate ., one
// checkout under two heap settings side by side: docs/performance.md, "Memory flags"); the chosen
// heap flags are added to each unless it names its own (`--max-semi-space-size=0` is V8's default).
// --gateway-env / --candidate-env: space-separated NAME=VALUE pairs set in that gateway's
// environment (glibc's MALLOC_* settings).
// Each target's RSS after the last round and its peak (VmHWM) over the rounds are printed beside
// its CPU (the peak is reset after the warm-up).
//
// --perf DIR: `perf record -e cpu-clock` (CPU time, not wall time: a V8 profile on a busy machine
// charges the time the process waited in a system call to that call) on each target during the
// last round, into DIR/<target>.data; the gateways run with --perf-basic-prof so that JS functions
// have names (`perf report -i DIR/switchyard.data --no-children --sort sym`).
//
// Prints one JSON line: per target, its CPU µs/req and req/s per round, the medians and the ratios.

import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { pickTool, runLoad } from './load.ts';
import { clockTicksPerSecond, cpuSeconds, memory, resetPeak } from './proc-stats.ts';
import { proxyGatewayConfig, startGateway, startNodeScript, type Child } from './processes.ts';
import { MB, median } from './stats.ts';
import { workloads, writeBodies, type WorkloadName } from './workloads.ts';

interface Target {
  readonly name: string;
  readonly child: Child;
  readonly url: string;
}

interface Round {
  readonly cpuUsPerRequest: number;
  readonly requestsPerSecond: number;
}

const { values } = parseArgs({
  options: {
    candidate: { type: 'string' },
    workload: { type: 'string', default: 'json' },
    connections: { type: 'string', default: '64' },
    duration: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '5' },
    'gateway-flags': { type: 'string', default: '' },
    'candidate-flags': { type: 'string' },
    'gateway-env': { type: 'string', default: '' },
    'candidate-env': { type: 'string', default: '' },
    tool: { type: 'string' },
    perf: { type: 'string' },
  },
});

const tool = pickTool(values.tool);
const ticks = clockTicksPerSecond();
const list = workloads();
const workload = list.find((w) => w.name === (values.workload as WorkloadName));
if (workload === undefined) throw new Error(`--workload: one of ${list.map((w) => w.name).join(', ')}`);
const perfDir = values.perf === undefined ? undefined : resolve(values.perf);
const gatewayFlags = [
  ...values['gateway-flags'].split(' ').filter((flag) => flag !== ''),
  ...(perfDir === undefined ? [] : ['--perf-basic-prof', '--interpreted-frames-native-stack']),
];
const candidateFlags =
  values['candidate-flags'] === undefined
    ? gatewayFlags
    : [
        ...values['candidate-flags'].split(' ').filter((flag) => flag !== ''),
        ...(perfDir === undefined ? [] : ['--perf-basic-prof', '--interpreted-frames-native-stack']),
      ];
/** `A=1 B=2` → { A: '1', B: '2' }. */
const envOf = (pairs: string): Record<string, string> =>
  Object.fromEntries(
    pairs
      .split(' ')
      .filter((pair) => pair.includes('='))
      .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
  );
if (perfDir !== undefined) await mkdir(perfDir, { recursive: true });
const dir = await mkdtemp(join(tmpdir(), 'switchyard-request-cpu-'));
const children: Child[] = [];
try {
  const bodyFile = (await writeBodies(dir, [workload])).get(workload.name) ?? '';
  const upstream = await startNodeScript('bench/upstream.ts');
  children.push(upstream);
  const upstreamUrl = String(upstream.ready.url);
  const bare = await startNodeScript('bench/bare-proxy.ts', [upstreamUrl]);
  children.push(bare);
  const targets: Target[] = [{ name: 'bare', child: bare, url: String(bare.ready.url) }];
  const gateway = await startGateway(proxyGatewayConfig(upstreamUrl), {
    nodeFlags: gatewayFlags,
    env: envOf(values['gateway-env']),
  });
  children.push(gateway);
  targets.push({ name: 'switchyard', child: gateway, url: gateway.url });
  if (values.candidate !== undefined) {
    const candidate = await startGateway(proxyGatewayConfig(upstreamUrl), {
      nodeFlags: candidateFlags,
      env: envOf(values['candidate-env']),
      root: resolve(values.candidate),
    });
    children.push(candidate);
    targets.push({ name: 'candidate', child: candidate, url: candidate.url });
  }
  const connections = Number(values.connections);
  const durationS = Number(values.duration);
  const rounds = new Map<string, Round[]>(targets.map((t) => [t.name, []]));
  for (const target of targets)
    await runLoad(tool, { url: new URL(workload.path, target.url).toString(), bodyFile, connections, durationS: 1 });
  for (const target of targets) resetPeak(target.child.pid);
  const roundCount = Number(values.rounds);
  for (let round = 0; round < roundCount; round += 1) {
    for (const target of targets) {
      const recorder =
        perfDir !== undefined && round === roundCount - 1
          ? startPerf(target.child.pid, join(perfDir, `${target.name}.data`))
          : undefined;
      const before = cpuSeconds(target.child.pid, ticks);
      const load = await runLoad(tool, { url: new URL(workload.path, target.url).toString(), bodyFile, connections, durationS });
      const used = cpuSeconds(target.child.pid, ticks) - before;
      await recorder?.stop();
      if (load.errors > 0) throw new Error(`${target.name}: ${load.errors} errors`);
      rounds.get(target.name)?.push({ cpuUsPerRequest: (used * 1e6) / load.requests, requestsPerSecond: load.requestsPerSecond });
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
  const memoryMB = Object.fromEntries(
    targets.map((t) => {
      const m = memory(t.child.pid);
      return [t.name, { rssMB: round2(m.rssBytes / MB), peakRssMB: round2(m.peakRssBytes / MB) }];
    }),
  );
  const bareMedian = medians.bare;
  const ratios = Object.fromEntries(
    Object.entries(medians)
      .filter(([name]) => name !== 'bare')
      .map(([name, m]) => [
        name,
        {
          cpuVsBare: round2(m.cpuUsPerRequest / (bareMedian?.cpuUsPerRequest ?? 1)),
          throughputVsBare: round2(m.requestsPerSecond / (bareMedian?.requestsPerSecond ?? 1)),
        },
      ]),
  );
  process.stdout.write(
    `${JSON.stringify({ workload: workload.name, connections, durationS, tool, medians, ratios, memoryMB, rounds: Object.fromEntries(rounds) })}\n`,
  );
} finally {
  for (const child of children.reverse()) await child.stop();
  await rm(dir, { recursive: true, force: true });
}

/** `perf record` on one process until stopped (SIGINT makes it write its file and exit). */
function startPerf(pid: number, file: string): { stop(): Promise<void> } {
  const perf = spawn('perf', ['record', '-e', 'cpu-clock', '-F', '1999', '-g', '-p', String(pid), '-o', file], {
    stdio: 'ignore',
  });
  const exited = new Promise<void>((done) => perf.once('exit', () => done()));
  return {
    async stop() {
      perf.kill('SIGINT');
      await exited;
    },
  };
}

function round2(value: number): number {
  return Math.round(value * 100) / 100;
}
