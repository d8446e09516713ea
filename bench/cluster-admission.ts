// The admission round trip with [cluster] against one gateway without it: sequential chat requests
// through an in-process gateway to a node that answers at once (4 slots), p50/p99 per request, with
// and without a store (a local redis-server): what the shared lease (one acquire, one release
// script) adds per request, and the ratio. Also the RSS of a replica in its own process.
// Run by run.ts (`node bench/cluster-admission.ts [requests]` prints one JSON line).

import { request, Agent } from 'undici';
import { startSlotCountingNode } from '#test/fixtures/slot-counting-node.ts';
import { startRedisServer } from '#test/fixtures/redis-server.ts';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { clusterTable } from '#test/fixtures/cluster-replicas.ts';
import { startGateway } from '#test/fixtures/in-process-fleet.ts';
import { waitForHost } from '#test/fixtures/context.ts';
import { startGatewayProcess } from '#test/fixtures/processes.ts';
import { MB, percentile, round } from './stats.ts';

export interface ClusterAdmissionResult {
  readonly requests: number;
  readonly aloneP50Us: number;
  readonly aloneP99Us: number;
  readonly clusterP50Us: number;
  readonly clusterP99Us: number;
  readonly addedP50Us: number;
  readonly addedP99Us: number;
  readonly ratioP50: number;
  readonly ratioP99: number;
  readonly replicaRssMb: number;
}

async function timed(url: string, count: number, agent: Agent): Promise<number[]> {
  const body = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 });
  const samples: number[] = [];
  for (let i = 0; i < count + 100; i += 1) {
    const started = process.hrtime.bigint();
    const res = await request(`${url}/v1/chat/completions`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json' },
      dispatcher: agent,
    });
    await res.body.text();
    if (res.statusCode !== 200) throw new Error(`bench request answered ${res.statusCode}`);
    if (i >= 100) samples.push(Number(process.hrtime.bigint() - started) / 1000);
  }
  return samples;
}

/** A replica of its own (a `serve` process with [cluster]) after 500 requests: its RSS from /admin/runtime. */
async function replicaRss(
  storeUrl: string,
  nodes: readonly { name: string; url: string; kind: string }[],
  agent: Agent,
): Promise<number> {
  const proc = await startGatewayProcess(gatewayToml(nodes, clusterTable(storeUrl, 'bench-process', 'bench:', '10s')));
  try {
    await waitForHost(proc.url, 'n', (h) => h.models?.m?.slots === 4, 'slots known');
    await timed(proc.url, 400, agent);
    const res = await request(`${proc.url}/admin/runtime`, { dispatcher: agent });
    return ((await res.body.json()) as { rss_bytes: number }).rss_bytes;
  } finally {
    await proc.stop();
  }
}

export async function runClusterAdmission(count: number): Promise<ClusterAdmissionResult> {
  const node = await startSlotCountingNode({ slots: 4, holdMs: 0 });
  const redis = await startRedisServer();
  const agent = new Agent({ connections: 1 });
  const nodes = [{ name: 'n', url: node.url, kind: 'llamacpp' }];
  const alone = await startGateway(gatewayToml(nodes), { logLevel: 'warn' });
  const replica = await startGateway(gatewayToml(nodes, clusterTable(redis.url, 'bench', 'bench:', '10s')), { logLevel: 'warn' });
  try {
    for (const gw of [alone, replica]) await waitForHost(gw.url, 'n', (h) => h.models?.m?.slots === 4, 'slots known');
    // Interleaved halves, so a busy moment of the machine falls on both.
    const a: number[] = [];
    const c: number[] = [];
    for (let half = 0; half < 2; half += 1) {
      a.push(...(await timed(alone.url, count / 2, agent)));
      c.push(...(await timed(replica.url, count / 2, agent)));
    }
    const [a50, a99, c50, c99] = [percentile(a, 50), percentile(a, 99), percentile(c, 50), percentile(c, 99)];
    return {
      requests: count,
      aloneP50Us: round(a50),
      aloneP99Us: round(a99),
      clusterP50Us: round(c50),
      clusterP99Us: round(c99),
      addedP50Us: round(c50 - a50),
      addedP99Us: round(c99 - a99),
      ratioP50: round(c50 / a50),
      ratioP99: round(c99 / a99),
      replicaRssMb: round((await replicaRss(redis.url, nodes, agent)) / MB),
    };
  } finally {
    await Promise.allSettled([alone.close(), replica.close()]);
    await agent.close();
    await redis.stop();
    await node.close();
  }
}

if (import.meta.main) {
  const count = Number(process.argv[2] ?? 2000);
  process.stdout.write(`${JSON.stringify({ event: 'cluster admission', result: await runClusterAdmission(count) })}\n`);
}
