// Tails under open-loop load (issue 28): JSON requests sent at a fixed rate (1,000 req/s), each
// timed from when it was due, not when the client got round to it (no coordinated omission),
// through a gateway whose control plane polls 100 nodes (bench/fleet-server.ts) every 2 s
// ("polls running") and, as a second gateway, with the same 100 nodes polled once an hour ("polls
// paused"); "direct" is the upstream itself, for the added figures, and "bare" the bare stack proxy
// (bench/bare-proxy.ts) in front of it. Each row is its own gateway, measured in turn on the same
// upstream with the same client. Before each open-loop row, a c=1 cell: one request at a time on
// one keep-alive connection, timed with performance.now() (µs; autocannon has whole ms).
// Each gateway runs with bench/loop-delay-probe.ts preloaded: its event-loop delay, GC pauses and CPU
// per second, beside the fleet process's and the client's CPU, say whether the polls starve the loop or
// the machine runs out of cores.
// Alone: `node bench/tails.ts [RATE] [SECONDS] [--profile DIR] ["--gateway-flags=NODE FLAGS"]` prints one
// JSON line (--profile: a CPU profile of the polls-running gateway, `node --cpu-prof`, in DIR).

import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { controlPlaneConfig } from './control-plane.ts';
import { clockTicksPerSecond, cpuSeconds } from './proc-stats.ts';
import { REPO_ROOT, sleepMs, startGateway, startNodeScript } from './processes.ts';
import { percentile } from './stats.ts';

export interface TailsRow {
  /** direct: the upstream; bare: bench/bare-proxy.ts in front of it; running / paused: the gateway with 100 nodes polled every 2 s / once an hour. */
  readonly polls: 'direct' | 'bare' | 'running' | 'paused';
  readonly rate: number;
  readonly sent: number;
  readonly errors: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly p999Ms: number;
  /** p99 minus direct's p99 (0 for direct). */
  readonly addedP99Ms: number;
  /** The gateway's main-thread event-loop delay over the measured seconds (bench/loop-delay-probe.ts): worst second's p99, and max. */
  readonly loopDelayP99Ms?: number;
  readonly loopDelayMaxMs?: number;
  /** CPU over the measured seconds, % of one core: the gateway, the 100-node fleet process, this client. */
  readonly gatewayCpuPercent?: number;
  readonly fleetCpuPercent?: number;
  readonly clientCpuPercent?: number;
  /**
   * p50 of the first and of the last fifth of the requests, by due time: a backlog (the target
   * slower than the rate) grows from one to the other; stalls (GC, a poll burst) do not.
   */
  readonly firstFifthP50Ms?: number;
  readonly lastFifthP50Ms?: number;
  /** The gateway's garbage-collector pauses over the measured seconds (perf_hooks 'gc'): total ms, the longest, how many. */
  readonly gcPauseMs?: number;
  readonly gcMaxPauseMs?: number;
  readonly gcCount?: number;
  /** The same by kind: minor (scavenge), major (mark-compact), incremental (marking steps): total ms, longest, count. */
  readonly gcByKind?: Readonly<Record<string, { ms: number; max: number; n: number }>>;
}

/** One request at a time on one keep-alive connection (c=1, closed-loop), timed with performance.now(): µs resolution. */
export interface SequentialRow {
  readonly target: TailsRow['polls'];
  readonly requests: number;
  readonly errors: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly p999Ms: number;
  /** p50 / p99 minus direct's (0 for direct). */
  readonly addedP50Ms: number;
  readonly addedP99Ms: number;
  readonly gcPauseMs?: number;
  readonly gcMaxPauseMs?: number;
}

interface LoopSecond {
  readonly t: number;
  readonly p99: number;
  readonly max: number;
  readonly gcMs?: number;
  readonly gcMaxMs?: number;
  readonly gcCount?: number;
  readonly gcKinds?: Readonly<Record<string, { ms: number; max: number; n: number }>>;
}

/** Pure: the GC pauses the probe's seconds saw. */
export function gcOver(seconds: readonly LoopSecond[]): {
  gcPauseMs: number;
  gcMaxPauseMs: number;
  gcCount: number;
  gcByKind: Record<string, { ms: number; max: number; n: number }>;
} {
  const gcByKind: Record<string, { ms: number; max: number; n: number }> = {};
  for (const second of seconds) {
    for (const [kind, k] of Object.entries(second.gcKinds ?? {})) {
      const sum = (gcByKind[kind] ??= { ms: 0, max: 0, n: 0 });
      sum.ms += k.ms;
      sum.max = Math.max(sum.max, k.max);
      sum.n += k.n;
    }
  }
  return {
    gcByKind,
    gcPauseMs: seconds.reduce((sum, s) => sum + (s.gcMs ?? 0), 0),
    gcMaxPauseMs: Math.max(0, ...seconds.map((s) => s.gcMaxMs ?? 0)),
    gcCount: seconds.reduce((sum, s) => sum + (s.gcCount ?? 0), 0),
  };
}

/** The probe's seconds that fall inside [from, to] (epoch ms). */
async function loopSeconds(file: string, from: number, to: number): Promise<LoopSecond[]> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as LoopSecond)
    .filter((s) => s.t > from + 1000 && s.t <= to);
}

export interface TailsResult {
  readonly nodes: number;
  readonly rows: readonly TailsRow[];
  /** c=1, closed-loop, for `sequentialS` seconds per target (the c=1 target with µs resolution). */
  readonly sequential: readonly SequentialRow[];
}

/** Requests one after another on one connection for `seconds`; their latencies (ms, µs resolution) and errors. */
export async function sequential(url: string, body: Buffer, seconds: number): Promise<{ latencies: number[]; errors: number }> {
  const target = new URL(url);
  const pool = new Pool(target.origin, { connections: 1, pipelining: 1 });
  const latencies: number[] = [];
  let errors = 0;
  const end = performance.now() + seconds * 1000;
  try {
    while (performance.now() < end) {
      const t0 = performance.now();
      try {
        const res = await pool.request({
          path: target.pathname,
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        });
        await res.body.arrayBuffer();
        if (res.statusCode === 200) latencies.push(performance.now() - t0);
        else errors += 1;
      } catch {
        errors += 1;
      }
    }
  } finally {
    await pool.close();
  }
  return { latencies, errors };
}

/** `rate` requests a second for `seconds`, each timed from its due time; the latencies (ms) and errors. */
export async function openLoop(
  url: string,
  body: Buffer,
  rate: number,
  seconds: number,
): Promise<{ latencies: number[]; errors: number; inOrder: number[] }> {
  const target = new URL(url);
  const pool = new Pool(target.origin, { connections: 512, pipelining: 1 });
  const latencies: number[] = [];
  const byIndex: (number | undefined)[] = [];
  const counts = { errors: 0, inFlight: 0 };
  const total = Math.round(rate * seconds);
  const start = performance.now() + 5;
  const done: Promise<void>[] = [];
  for (let i = 0; i < total; i += 1) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await sleepMs(wait - 0.5);
    // Timed from when it was due (a late send counts against the target), or from when it was sent
    // if the timer woke a little early.
    const from = Math.min(due, performance.now());
    counts.inFlight += 1;
    done.push(
      pool
        .request({ path: target.pathname, method: 'POST', headers: { 'content-type': 'application/json' }, body })
        .then(async (res) => {
          await res.body.arrayBuffer();
          if (res.statusCode !== 200) counts.errors += 1;
          else {
            const latency = performance.now() - from;
            latencies.push(latency);
            byIndex[i] = latency;
          }
        })
        .catch(() => {
          counts.errors += 1;
        })
        .finally(() => {
          counts.inFlight -= 1;
        }),
    );
  }
  await Promise.all(done);
  await pool.close();
  return { latencies, errors: counts.errors, inOrder: byIndex.filter((x): x is number => x !== undefined) };
}

export async function runTailsBench(options: {
  rate: number;
  seconds: number;
  nodes: number;
  bodyFile: string;
  profileDir?: string;
  sequentialS?: number;
  gatewayFlags?: readonly string[];
}): Promise<TailsResult> {
  const body = await readFile(options.bodyFile);
  const ticks = clockTicksPerSecond();
  const probeDir = await mkdtemp(join(tmpdir(), 'switchyard-bench-loop-'));
  const upstream = await startNodeScript('bench/upstream.ts');
  const fleet = await startNodeScript('bench/fleet-server.ts', ['--nodes', String(options.nodes), '--models', '50']);
  const bare = await startNodeScript('bench/bare-proxy.ts', [String(upstream.ready.url)]);
  const rows: TailsRow[] = [];
  const seqRows: SequentialRow[] = [];
  const sequentialS = options.sequentialS ?? 3;
  /** The c=1 cell of one target: after a second's warm-up, `sequentialS` seconds of one request at a time. */
  const measureSequential = async (target: SequentialRow['target'], base: string, loopFile?: string): Promise<void> => {
    const url = `${base}/v1/chat/completions`;
    await sequential(url, body, 1);
    const from = Date.now();
    const { latencies, errors } = await sequential(url, body, sequentialS);
    const direct = seqRows.find((r) => r.target === 'direct');
    const p50 = percentile(latencies, 50);
    const p99 = percentile(latencies, 99);
    let gc = {};
    if (loopFile !== undefined) {
      await sleepMs(1100);
      const { gcPauseMs, gcMaxPauseMs } = gcOver(await loopSeconds(loopFile, from - 1000, Date.now()));
      gc = { gcPauseMs, gcMaxPauseMs };
    }
    seqRows.push({
      target,
      requests: latencies.length + errors,
      errors,
      p50Ms: p50,
      p99Ms: p99,
      p999Ms: percentile(latencies, 99.9),
      addedP50Ms: direct === undefined ? 0 : p50 - direct.p50Ms,
      addedP99Ms: direct === undefined ? 0 : p99 - direct.p99Ms,
      ...gc,
    });
  };
  try {
    const upstreamUrl = String(upstream.ready.url);
    const bareUrl = String(bare.ready.url);
    const urls = (fleet.ready.urls as unknown[]).map(String);
    const measure = async (
      polls: TailsRow['polls'],
      base: string,
      gateway?: { pid: number; loopFile: string },
    ): Promise<void> => {
      const url = `${base}/v1/chat/completions`;
      await openLoop(url, body, options.rate, 1);
      const from = Date.now();
      const cpu0 = {
        self: process.cpuUsage(),
        fleet: cpuSeconds(fleet.pid, ticks),
        gw: gateway === undefined ? 0 : cpuSeconds(gateway.pid, ticks),
      };
      const { latencies, errors, inOrder } = await openLoop(url, body, options.rate, options.seconds);
      const fifth = Math.max(1, Math.floor(inOrder.length / 5));
      const wallS = (Date.now() - from) / 1000;
      const self = process.cpuUsage(cpu0.self);
      const pct = (s: number): number => (100 * s) / wallS;
      const extra: Partial<TailsRow> = {
        firstFifthP50Ms: percentile(inOrder.slice(0, fifth), 50),
        lastFifthP50Ms: percentile(inOrder.slice(-fifth), 50),
        fleetCpuPercent: pct(cpuSeconds(fleet.pid, ticks) - cpu0.fleet),
        clientCpuPercent: pct((self.user + self.system) / 1e6),
      };
      if (gateway !== undefined) {
        await sleepMs(1100);
        const seconds = await loopSeconds(gateway.loopFile, from, Date.now());
        Object.assign(extra, {
          gatewayCpuPercent: pct(cpuSeconds(gateway.pid, ticks) - cpu0.gw),
          loopDelayP99Ms: Math.max(0, ...seconds.map((s) => s.p99)),
          loopDelayMaxMs: Math.max(0, ...seconds.map((s) => s.max)),
          ...gcOver(seconds),
        });
      }
      const p99 = percentile(latencies, 99);
      const direct = rows.find((r) => r.polls === 'direct');
      rows.push({
        polls,
        rate: options.rate,
        sent: latencies.length + errors,
        errors,
        p50Ms: percentile(latencies, 50),
        p99Ms: p99,
        p999Ms: percentile(latencies, 99.9),
        addedP99Ms: direct === undefined ? 0 : p99 - direct.p99Ms,
        ...extra,
      });
    };
    await measureSequential('direct', upstreamUrl);
    await measureSequential('bare', bareUrl);
    await measure('direct', upstreamUrl);
    await measure('bare', bareUrl);
    for (const [polls, intervalS] of [
      ['running', 2],
      ['paused', 3600],
    ] as const) {
      const loopFile = join(probeDir, `${polls}.jsonl`);
      const profile =
        polls === 'running' && options.profileDir !== undefined ? ['--cpu-prof', `--cpu-prof-dir=${options.profileDir}`] : [];
      const nodeFlags = ['--import', join(REPO_ROOT, 'bench/loop-delay-probe.ts'), ...profile, ...(options.gatewayFlags ?? [])];
      const gateway = await startGateway(controlPlaneConfig(urls, intervalS, upstreamUrl), {
        nodeFlags,
        env: { BENCH_LOOP_DELAY_FILE: loopFile },
      });
      try {
        await sleepMs(3000);
        await measureSequential(polls, gateway.url, loopFile);
        await measure(polls, gateway.url, { pid: gateway.pid, loopFile });
      } finally {
        await gateway.stop();
      }
    }
    return { nodes: options.nodes, rows, sequential: seqRows };
  } finally {
    await bare.stop();
    await fleet.stop();
    await upstream.stop();
    await rm(probeDir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const { mkdtemp, writeFile, rm } = await import('node:fs/promises');
  const { join } = await import('node:path');
  const { tmpdir } = await import('node:os');
  const { workloads } = await import('./workloads.ts');
  const { SSE_CHUNKS } = await import('./upstream.ts');
  const json = workloads(SSE_CHUNKS).find((w) => w.name === 'json');
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-bench-tails-'));
  const file = join(dir, 'json.body');
  await writeFile(file, json?.body ?? '');
  const profileAt = process.argv.indexOf('--profile');
  const profileDir = profileAt >= 0 ? process.argv[profileAt + 1] : undefined;
  const flagsArg = process.argv.find((arg) => arg.startsWith('--gateway-flags='));
  const gatewayFlags = (flagsArg?.slice('--gateway-flags='.length) ?? '').split(' ').filter((flag) => flag !== '');
  const result = await runTailsBench({
    rate: Number(process.argv[2] ?? '1000'),
    seconds: Number(process.argv[3] ?? '5'),
    nodes: 100,
    bodyFile: file,
    gatewayFlags,
    ...(profileDir === undefined ? {} : { profileDir }),
  });
  await rm(dir, { recursive: true, force: true });
  process.stdout.write(`${JSON.stringify({ event: 'tails', ...result })}\n`);
}
