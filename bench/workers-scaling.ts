// Issue 39, product question 3: what `[server] workers = 2` gives against one thread, and against
// two `[cluster]` replicas (two processes sharing one redis-server, the load split over both), in
// front of the same zero-think-time upstream (bench/upstream.ts), in one run, the targets in turn
// each round. Per target and workload: req/s, p99, the gateway's CPU µs per request (every process
// of it), and its main thread's (the owner's, /proc/<pid>/task/<pid>/stat): what stays serial
// however many workers there are. The bench node reports no slots, so the replicas share nothing
// per request (a node with slots adds the store's acquire and release: bench/cluster-admission.ts).
//
//   node bench/workers-scaling.ts [--duration 5] [--rounds 3] [--connections 64] [--no-cluster]
//
// Prints one JSON line.

import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startRedisServer, type RedisServer } from '#test/fixtures/redis-server.ts';
import { pickTool, runLoad, type LoadResult } from './load.ts';
import { clockTicksPerSecond, cpuSeconds } from './proc-stats.ts';
import { proxyGatewayConfig, startGateway, startNodeScript, type Child, type GatewayChild } from './processes.ts';
import { median } from './stats.ts';
import { workloads, writeBodies, type WorkloadName } from './workloads.ts';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '64' },
    'no-cluster': { type: 'boolean', default: false },
    tool: { type: 'string' },
  },
});

/** CPU seconds of one thread (utime + stime of /proc/<pid>/task/<tid>/stat). */
function threadCpuSeconds(pid: number, tid: number, ticks: number): number {
  const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / ticks;
}

interface Target {
  readonly name: string;
  readonly gateways: readonly GatewayChild[];
}

interface Row {
  readonly requestsPerSecond: number;
  readonly p99Ms: number;
  readonly cpuUsPerRequest: number;
  readonly ownerCpuUsPerRequest: number;
  readonly loadGeneratorCpuS: number;
}

const tool = pickTool(values.tool);
const ticks = clockTicksPerSecond();
const dir = await mkdtemp(join(tmpdir(), 'switchyard-workers-scaling-'));
const children: Child[] = [];
let redis: RedisServer | undefined;
try {
  const list = workloads().filter((w) => w.name === 'json' || w.name === 'sse');
  const bodies = await writeBodies(dir, list);
  const upstream = await startNodeScript('bench/upstream.ts');
  children.push(upstream);
  const upstreamUrl = String(upstream.ready.url);
  const targets: Target[] = [];
  for (const workers of [1, 2]) {
    const gateway = await startGateway(proxyGatewayConfig(upstreamUrl, workers));
    children.push(gateway);
    targets.push({ name: `workers=${workers}`, gateways: [gateway] });
  }
  if (!values['no-cluster']) {
    redis = await startRedisServer();
    const replicas: GatewayChild[] = [];
    for (const replica of ['r1', 'r2']) {
      const toml = `${proxyGatewayConfig(upstreamUrl, 1)}[cluster]\nstore = "${redis.url}"\nreplica = "${replica}"\nprefix = "bench:"\n`;
      const gateway = await startGateway(toml);
      children.push(gateway);
      replicas.push(gateway);
    }
    targets.push({ name: 'cluster 2 replicas', gateways: replicas });
  }
  const connections = Number(values.connections);
  const durationS = Number(values.duration);
  const load = async (target: Target, name: WorkloadName, seconds: number): Promise<LoadResult[]> => {
    const workload = list.find((w) => w.name === name);
    if (workload === undefined) throw new Error(name);
    const share = Math.max(1, Math.round(connections / target.gateways.length));
    return Promise.all(
      target.gateways.map((gw) =>
        runLoad(tool, {
          url: new URL(workload.path, gw.url).toString(),
          bodyFile: bodies.get(name) ?? '',
          connections: share,
          durationS: seconds,
        }),
      ),
    );
  };
  for (const target of targets) for (const w of list) await load(target, w.name, 1);
  const startLoad = loadavg()[0] ?? 0;
  const rows = new Map<string, Row[]>();
  for (let round = 0; round < Number(values.rounds); round += 1)
    for (const w of list)
      for (const target of targets) {
        const pids = target.gateways.map((g) => g.pid);
        const cpuBefore = pids.reduce((sum, pid) => sum + cpuSeconds(pid, ticks), 0);
        const ownerBefore = pids.reduce((sum, pid) => sum + threadCpuSeconds(pid, pid, ticks), 0);
        const results = await load(target, w.name, durationS);
        const cpu = pids.reduce((sum, pid) => sum + cpuSeconds(pid, ticks), 0) - cpuBefore;
        const owner = pids.reduce((sum, pid) => sum + threadCpuSeconds(pid, pid, ticks), 0) - ownerBefore;
        const requests = results.reduce((sum, r) => sum + r.requests, 0);
        const errors = results.reduce((sum, r) => sum + r.errors, 0);
        if (errors > 0) throw new Error(`${target.name} ${w.name}: ${errors} errors`);
        const row: Row = {
          requestsPerSecond: results.reduce((sum, r) => sum + r.requestsPerSecond, 0),
          p99Ms: Math.max(...results.map((r) => r.latencyMs.p99)),
          cpuUsPerRequest: (cpu * 1e6) / requests,
          // With one process per target and one thread, the owner is the whole gateway.
          ownerCpuUsPerRequest: (owner * 1e6) / requests,
          loadGeneratorCpuS: results.reduce((sum, r) => sum + r.loadGeneratorCpuSeconds, 0),
        };
        const key = `${target.name} ${w.name}`;
        rows.set(key, [...(rows.get(key) ?? []), row]);
        process.stderr.write(
          `round ${round} ${key}: ${Math.round(row.requestsPerSecond)} req/s, p99 ${row.p99Ms} ms, ` +
            `${row.cpuUsPerRequest.toFixed(1)} µs CPU/req (owner thread ${row.ownerCpuUsPerRequest.toFixed(1)}), load ${loadavg()[0]?.toFixed(1)}\n`,
        );
      }
  const medians = Object.fromEntries(
    [...rows].map(([key, list]) => [
      key,
      {
        requestsPerSecond: Math.round(median(list.map((r) => r.requestsPerSecond))),
        p99Ms: median(list.map((r) => r.p99Ms)),
        cpuUsPerRequest: Math.round(median(list.map((r) => r.cpuUsPerRequest))),
        ownerCpuUsPerRequest: Math.round(median(list.map((r) => r.ownerCpuUsPerRequest))),
      },
    ]),
  );
  process.stdout.write(
    `${JSON.stringify({ event: 'workers scaling', tool, connections, durationS, loadAtStart: startLoad, loadAtEnd: loadavg()[0], medians, rounds: Object.fromEntries(rows) })}\n`,
  );
} finally {
  for (const child of children.reverse()) await child.stop().catch(() => {});
  await redis?.stop();
  await rm(dir, { recursive: true, force: true });
}
