// Do the replicas' polls matter? Issue 26 keeps discovery, health and capacity polling local to
// each replica ("add `[cluster] poll = "all" | "leader"` if measuring shows the polls matter").
// This measures what polling costs with R replicas against one: R real gateway processes with
// [cluster] on one redis-server, in front of N nodes (one lightweight fleet-server process, one
// port per node), at the default intervals ([health] 5 s, [discovery] 10 s), no client traffic.
// Per run: the upstream requests per second the fleet saw, each gateway's CPU (% of one core), the
// fleet process's CPU (what answering the polls cost the "nodes"), and the RSS of a replica.
//
// `node bench/cluster-polls.ts [--nodes 100,1000] [--replicas 1,3] [--measure 15]` prints one JSON
// line per run and a summary table.

import { parseArgs } from 'node:util';
import { clockTicksPerSecond, cpuSeconds, machineBusySeconds, memory } from './proc-stats.ts';
import { sleepMs, startGateway, startNodeScript, type GatewayChild } from './processes.ts';
import { MB, round } from './stats.ts';
import { startRedisServer } from '#test/fixtures/redis-server.ts';
import { clusterTable } from '#test/fixtures/cluster-replicas.ts';

interface PollRun {
  readonly nodes: number;
  readonly replicas: number;
  readonly measuredS: number;
  readonly upstreamRequestsPerSecond: number;
  readonly healthPerSecond: number;
  readonly modelsPerSecond: number;
  /** Every replica's CPU summed, % of one core. */
  readonly gatewaysCpuPercent: number;
  /** The busiest replica's. */
  readonly maxReplicaCpuPercent: number;
  /** The fleet process's CPU: what answering the polls cost the nodes' side. */
  readonly fleetCpuPercent: number;
  readonly replicaRssMb: number;
  /** Other processes' CPU on the machine in the window: noise. */
  readonly otherCpuPercent: number;
}

function config(urls: readonly string[], store: string, replica: string, prefix: string): string {
  const lines = [
    '[server]',
    'listen = "127.0.0.1:0"',
    '[health]',
    'interval = "5s"',
    'timeout = "2s"',
    '[discovery]',
    'interval = "10s"',
    'timeout = "5s"',
  ];
  urls.forEach((url, i) => lines.push('[[nodes]]', `name = "n${i}"`, `url = "${url}"`, 'kind = "vllm"'));
  return `${lines.join('\n')}\n${clusterTable(store, replica, prefix, '10s')}`;
}

async function run(nodes: number, replicas: number, store: string, measureS: number, ticks: number): Promise<PollRun> {
  const fleet = await startNodeScript('bench/fleet-server.ts', ['--nodes', String(nodes), '--models', '10']);
  const gateways: GatewayChild[] = [];
  try {
    const urls = (fleet.ready.urls as unknown[]).map(String);
    const statsUrl = String(fleet.ready.stats);
    const prefix = `polls${nodes}x${replicas}:`;
    for (let i = 0; i < replicas; i += 1) gateways.push(await startGateway(config(urls, store, `r${i}`, prefix)));
    // Two discovery rounds: every node listed, the first round's burst over.
    await sleepMs(20_000);
    const counts = async (): Promise<{ health: number; models: number }> =>
      (await (await fetch(statsUrl)).json()) as { health: number; models: number };
    const before = await counts();
    const cpuBefore = gateways.map((g) => cpuSeconds(g.pid, ticks));
    const fleetBefore = cpuSeconds(fleet.pid, ticks);
    const machineBefore = machineBusySeconds(ticks);
    const started = performance.now();
    await sleepMs(measureS * 1000);
    const measuredS = (performance.now() - started) / 1000;
    const cpu = gateways.map((g, i) => cpuSeconds(g.pid, ticks) - (cpuBefore[i] ?? 0));
    const fleetCpu = cpuSeconds(fleet.pid, ticks) - fleetBefore;
    const machine = machineBusySeconds(ticks) - machineBefore;
    const after = await counts();
    const total = cpu.reduce((a, b) => a + b, 0);
    return {
      nodes,
      replicas,
      measuredS: round(measuredS),
      upstreamRequestsPerSecond: round((after.health - before.health + after.models - before.models) / measuredS),
      healthPerSecond: round((after.health - before.health) / measuredS),
      modelsPerSecond: round((after.models - before.models) / measuredS),
      gatewaysCpuPercent: round((total / measuredS) * 100),
      maxReplicaCpuPercent: round((Math.max(...cpu) / measuredS) * 100),
      fleetCpuPercent: round((fleetCpu / measuredS) * 100),
      replicaRssMb: round(memory(gateways[0]?.pid ?? 0).rssBytes / MB),
      otherCpuPercent: round(Math.max(0, ((machine - total - fleetCpu) / measuredS) * 100)),
    };
  } finally {
    await Promise.allSettled(gateways.map((g) => g.stop()));
    await fleet.stop();
  }
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      nodes: { type: 'string', default: '100,1000' },
      replicas: { type: 'string', default: '1,3' },
      measure: { type: 'string', default: '15' },
    },
  });
  const ticks = clockTicksPerSecond();
  const redis = await startRedisServer();
  const runs: PollRun[] = [];
  try {
    for (const nodes of values.nodes.split(',').map(Number)) {
      for (const replicas of values.replicas.split(',').map(Number)) {
        const r = await run(nodes, replicas, redis.url, Number(values.measure), ticks);
        runs.push(r);
        process.stdout.write(`${JSON.stringify(r)}\n`);
      }
    }
  } finally {
    await redis.stop();
  }
  process.stdout.write(
    '\nnodes  replicas  upstream req/s  gateways CPU %  per replica %  fleet CPU %  replica RSS MB  other CPU %\n',
  );
  for (const r of runs) {
    process.stdout.write(
      `${String(r.nodes).padStart(5)}  ${String(r.replicas).padStart(8)}  ${String(r.upstreamRequestsPerSecond).padStart(14)}  ${String(r.gatewaysCpuPercent).padStart(14)}  ${String(r.maxReplicaCpuPercent).padStart(13)}  ${String(r.fleetCpuPercent).padStart(11)}  ${String(r.replicaRssMb).padStart(14)}  ${String(r.otherCpuPercent).padStart(11)}\n`,
    );
  }
}
