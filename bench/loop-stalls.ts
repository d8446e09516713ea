// What stalls a c=1 request inside the gateway, in figures a busy machine does not move (issue 42,
// "tails"): one request at a time on one keep-alive connection to the proxy-bench gateway (one node,
// its control loops an hour apart), each request's main-thread CPU taken inside the gateway
// (bench/request-cpu-probe.ts preloaded: process.threadCpuUsage from the request to the response's
// finish, so time spent waiting for a core is not counted), beside every collector pause. Counted per
// 10,000 requests: requests the loop spent over 1 ms / 2 ms of CPU on (and how many of those a
// scavenge fell into), scavenges and major collections; the CPU of V8's worker threads (parallel
// scavenges, concurrent marking and sweeping) per request from /proc; and periodic work by request
// count — the median CPU of every `PERIOD`-th request (the event bus's deferred journals drain every
// DEFERRED_CAPACITY requests) against all requests'. Each variant is its own gateway with its own
// node flags (heap flags, e.g. the semi-space sizes the "Memory flags" section weighs), measured in
// turn against the same upstream, then the bare stack proxy with the same probe.
// `node bench/loop-stalls.ts [--requests 10000] [--warmup 3000] [--workloads json,sse] [--no-bare]
//  ["--variants=--max-semi-space-size=16;--max-semi-space-size=8;--max-semi-space-size=4;--max-semi-space-size=0"]`
// prints a markdown table (and, with --json, one JSON line).

import { readFile, rm, writeFile, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { DEFERRED_CAPACITY } from '../src/core/events.ts';
import { clockTicksPerSecond, threadCpuSeconds } from './proc-stats.ts';
import { proxyGatewayConfig, REPO_ROOT, startChild, startGateway, startNodeScript, sleepMs, type Child } from './processes.ts';
import { percentile } from './stats.ts';
import { SSE_CHUNKS } from './upstream.ts';
import { workloads, type WorkloadName } from './workloads.ts';

const PROBE = join(REPO_ROOT, 'bench/request-cpu-probe.ts');

export interface ProbedRequest {
  /** Epoch ms it arrived; wall ms until its response finished; main-thread CPU ms meanwhile. */
  readonly at: number;
  readonly wallMs: number;
  readonly cpuMs: number;
}

export interface GcPause {
  readonly at: number;
  readonly ms: number;
  /** perf_hooks kinds: 1 scavenge, 2 mark-compact, 4 incremental marking (a major collection's finish), 8 weak callbacks. */
  readonly kind: number;
}

export interface StallFigures {
  readonly requests: number;
  /** Main-thread CPU per request, ms. */
  readonly cpuP50Ms: number;
  readonly cpuP99Ms: number;
  readonly cpuP999Ms: number;
  readonly cpuMaxMs: number;
  /** Requests with more than 1 ms / 2 ms of main-thread CPU, per 10,000; and of the 2 ms ones, those a scavenge fell into. */
  readonly over1MsPer10k: number;
  readonly over2MsPer10k: number;
  readonly over2MsWithScavengePer10k: number;
  /** Collector pauses per 10,000 requests: scavenges, and major collections (mark-compact, incremental finish). */
  readonly scavengesPer10k: number;
  readonly majorPer10k: number;
  /** The longest scavenge and major pause, wall ms (stretched when the machine is busy: read the counts first). */
  readonly scavengeMaxMs: number;
  readonly majorMaxMs: number;
  /** Every `period`-th request (the residue whose median CPU is highest): its median CPU minus all requests' median, ms. */
  readonly periodic: { readonly period: number; readonly residue: number; readonly extraMs: number };
}

/** Pure: the figures of the requests and pauses seen inside [from, to] (epoch ms), requests in arrival order. */
export function stallFigures(
  all: readonly ProbedRequest[],
  gcs: readonly GcPause[],
  from: number,
  to: number,
  period = DEFERRED_CAPACITY,
): StallFigures {
  const requests = all.filter((r) => r.at >= from && r.at <= to);
  const pauses = gcs.filter((g) => g.at >= from && g.at <= to);
  const n = Math.max(1, requests.length);
  const per10k = (count: number): number => (count * 10_000) / n;
  const cpu = requests.map((r) => r.cpuMs);
  const scavenges = pauses.filter((g) => g.kind === 1);
  const majors = pauses.filter((g) => g.kind === 2 || g.kind === 4);
  const overlapsScavenge = (r: ProbedRequest): boolean => scavenges.some((g) => g.at < r.at + r.wallMs && g.at + g.ms > r.at);
  const over2 = requests.filter((r) => r.cpuMs > 2);
  const median = percentile(cpu, 50);
  let periodic = { period, residue: 0, extraMs: 0 };
  if (requests.length >= period * 4) {
    for (let residue = 0; residue < period; residue++) {
      const every: number[] = [];
      for (let i = residue; i < cpu.length; i += period) every.push(cpu[i] as number);
      const extraMs = percentile(every, 50) - median;
      if (extraMs > periodic.extraMs) periodic = { period, residue, extraMs };
    }
  }
  return {
    requests: requests.length,
    cpuP50Ms: median,
    cpuP99Ms: percentile(cpu, 99),
    cpuP999Ms: percentile(cpu, 99.9),
    cpuMaxMs: Math.max(0, ...cpu),
    over1MsPer10k: per10k(requests.filter((r) => r.cpuMs > 1).length),
    over2MsPer10k: per10k(over2.length),
    over2MsWithScavengePer10k: per10k(over2.filter(overlapsScavenge).length),
    scavengesPer10k: per10k(scavenges.length),
    majorPer10k: per10k(majors.length),
    scavengeMaxMs: Math.max(0, ...scavenges.map((g) => g.ms)),
    majorMaxMs: Math.max(0, ...majors.map((g) => g.ms)),
    periodic,
  };
}

/** Pure: the probe file's lines. */
export function readProbe(text: string): { requests: ProbedRequest[]; gcs: GcPause[] } {
  const requests: ProbedRequest[] = [];
  const gcs: GcPause[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const [type, at, ms, last] = JSON.parse(line) as [string, number, number, number];
    if (type === 'r') requests.push({ at, wallMs: ms, cpuMs: last });
    else gcs.push({ at, ms, kind: last });
  }
  return { requests: requests.sort((a, b) => a.at - b.at), gcs };
}

export interface LoopStallsRow extends StallFigures {
  readonly workload: WorkloadName;
  /** The gateway's node flags for this row, or "bare" (the bare stack proxy, V8's defaults). */
  readonly target: string;
  /** CPU per request (µs, /proc, whole process's threads by name): the main thread, V8's worker threads. */
  readonly mainCpuUsPerRequest: number;
  readonly v8WorkerCpuUsPerRequest: number;
  /** Wall latency at the client (ms): moves with the machine's load. */
  readonly clientP50Ms: number;
  readonly clientP99Ms: number;
}

async function oneAtATime(url: string, body: Buffer, count: number): Promise<number[]> {
  const target = new URL(url);
  const pool = new Pool(target.origin, { connections: 1, pipelining: 1 });
  const latencies: number[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const t0 = performance.now();
      const res = await pool.request({
        path: target.pathname,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      await res.body.arrayBuffer();
      if (res.statusCode !== 200) throw new Error(`${url}: status ${res.statusCode}`);
      latencies.push(performance.now() - t0);
    }
  } finally {
    await pool.close();
  }
  return latencies;
}

async function measure(
  child: Child,
  url: string,
  probeFile: string,
  workload: { name: WorkloadName; body: Buffer; path: string },
  options: { requests: number; warmup: number; ticks: number },
  target: string,
): Promise<LoopStallsRow> {
  const full = `${url}${workload.path}`;
  await oneAtATime(full, workload.body, options.warmup);
  const threads0 = threadCpuSeconds(child.pid, options.ticks);
  const from = Date.now();
  const latencies = await oneAtATime(full, workload.body, options.requests);
  const to = Date.now();
  const threads1 = threadCpuSeconds(child.pid, options.ticks);
  await sleepMs(600);
  const { requests, gcs } = readProbe(await readFile(probeFile, 'utf8'));
  const used = (name: string): number => (threads1.get(name) ?? 0) - (threads0.get(name) ?? 0);
  const us = (seconds: number): number => (seconds * 1e6) / options.requests;
  return {
    workload: workload.name,
    target,
    ...stallFigures(requests, gcs, from, to),
    mainCpuUsPerRequest: us(used('main')),
    v8WorkerCpuUsPerRequest: us(used('V8Worker')),
    clientP50Ms: percentile(latencies, 50),
    clientP99Ms: percentile(latencies, 99),
  };
}

export async function runLoopStalls(options: {
  requests: number;
  warmup: number;
  workloads: readonly WorkloadName[];
  variants: readonly (readonly string[])[];
  bare: boolean;
}): Promise<LoopStallsRow[]> {
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-bench-stalls-'));
  const ticks = clockTicksPerSecond();
  const upstream = await startNodeScript('bench/upstream.ts');
  const rows: LoopStallsRow[] = [];
  try {
    const upstreamUrl = String(upstream.ready.url);
    for (const w of workloads(SSE_CHUNKS).filter((x) => options.workloads.includes(x.name))) {
      for (const [i, flags] of options.variants.entries()) {
        const probeFile = join(dir, `${w.name}-${i}.jsonl`);
        await writeFile(probeFile, '');
        const gateway = await startGateway(proxyGatewayConfig(upstreamUrl), {
          nodeFlags: ['--import', PROBE, ...flags],
          env: { BENCH_REQUEST_CPU_FILE: probeFile },
        });
        try {
          rows.push(
            await measure(gateway, gateway.url, probeFile, w, { ...options, ticks }, flags.join(' ') || 'chosen heap flags'),
          );
        } finally {
          await gateway.stop();
        }
      }
      if (options.bare) {
        const probeFile = join(dir, `${w.name}-bare.jsonl`);
        await writeFile(probeFile, '');
        const bare = await startChild({
          command: process.execPath,
          args: ['--import', PROBE, join(REPO_ROOT, 'bench/bare-proxy.ts'), upstreamUrl],
          isReady: (line) => line.includes('"event":"'),
          env: { BENCH_REQUEST_CPU_FILE: probeFile },
        });
        try {
          rows.push(await measure(bare, String(bare.ready.url), probeFile, w, { ...options, ticks }, 'bare'));
        } finally {
          await bare.stop();
        }
      }
    }
    return rows;
  } finally {
    await upstream.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/** Pure: the rows as a markdown table. */
export function loopStallsTable(rows: readonly LoopStallsRow[]): string {
  const f = (x: number, digits = 2): string => x.toFixed(digits);
  const lines = [
    '| workload | target | requests | main-thread CPU/request p50 / p99 / p99.9 / max ms | > 1 ms /10k | > 2 ms /10k (with a scavenge) | scavenges /10k (longest ms) | major GCs /10k (longest ms) | every Nth request: extra CPU ms | CPU µs/request main / V8 workers | client p50 / p99 ms |',
    '|---|---|---:|---|---:|---:|---:|---:|---:|---:|---|',
  ];
  for (const r of rows)
    lines.push(
      `| ${r.workload} | ${r.target} | ${r.requests} | ${f(r.cpuP50Ms, 3)} / ${f(r.cpuP99Ms, 3)} / ${f(r.cpuP999Ms)} / ${f(r.cpuMaxMs)} | ${f(r.over1MsPer10k, 0)} | ${f(r.over2MsPer10k, 0)} (${f(r.over2MsWithScavengePer10k, 0)}) | ${f(r.scavengesPer10k, 0)} (${f(r.scavengeMaxMs, 1)}) | ${f(r.majorPer10k, 1)} (${f(r.majorMaxMs, 1)}) | ${r.periodic.period}th: +${f(r.periodic.extraMs, 3)} | ${f(r.mainCpuUsPerRequest, 0)} / ${f(r.v8WorkerCpuUsPerRequest, 0)} | ${f(r.clientP50Ms, 3)} / ${f(r.clientP99Ms)} |`,
    );
  return lines.join('\n');
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      requests: { type: 'string', default: '10000' },
      warmup: { type: 'string', default: '3000' },
      workloads: { type: 'string', default: 'json,sse' },
      variants: {
        type: 'string',
        default: '--max-semi-space-size=16;--max-semi-space-size=8;--max-semi-space-size=4;--max-semi-space-size=0',
      },
      'no-bare': { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
    },
  });
  const rows = await runLoopStalls({
    requests: Number(values.requests),
    warmup: Number(values.warmup),
    workloads: values.workloads.split(',') as WorkloadName[],
    variants: values.variants.split(';').map((v) => v.split(' ').filter((flag) => flag !== '')),
    bare: !values['no-bare'],
  });
  process.stdout.write(`${loopStallsTable(rows)}\n`);
  if (values.json) process.stdout.write(`${JSON.stringify({ event: 'loop-stalls', rows })}\n`);
}
