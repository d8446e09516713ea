// Tails under open-loop load (issue 28): JSON requests sent at a fixed rate (1,000 req/s), each
// timed from when it was due, not when the client got round to it (no coordinated omission),
// through a gateway whose control plane polls 100 nodes (bench/fleet-server.ts) every 2 s
// ("polls running") and, as a second gateway, with the same 100 nodes polled once an hour ("polls
// paused"); "direct" is the upstream itself, for the added figures. Each row is its own gateway,
// measured in turn on the same upstream with the same client.
// Alone: `node bench/tails.ts [RATE] [SECONDS]` prints one JSON line.

import { readFile } from 'node:fs/promises';
import { Pool } from 'undici';
import { controlPlaneConfig } from './control-plane.ts';
import { sleepMs, startGateway, startNodeScript } from './processes.ts';
import { percentile } from './stats.ts';

export interface TailsRow {
  readonly polls: 'direct' | 'running' | 'paused';
  readonly rate: number;
  readonly sent: number;
  readonly errors: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly p999Ms: number;
  /** p99 minus direct's p99 (0 for direct). */
  readonly addedP99Ms: number;
}

export interface TailsResult {
  readonly nodes: number;
  readonly rows: readonly TailsRow[];
}

/** `rate` requests a second for `seconds`, each timed from its due time; the latencies (ms) and errors. */
export async function openLoop(url: string, body: Buffer, rate: number, seconds: number): Promise<{ latencies: number[]; errors: number }> {
  const target = new URL(url);
  const pool = new Pool(target.origin, { connections: 512, pipelining: 1 });
  const latencies: number[] = [];
  const counts = { errors: 0, inFlight: 0 };
  const total = Math.round(rate * seconds);
  const start = performance.now() + 5;
  const done: Promise<void>[] = [];
  for (let i = 0; i < total; i += 1) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await sleepMs(wait - 0.5);
    counts.inFlight += 1;
    done.push(
      pool
        .request({ path: target.pathname, method: 'POST', headers: { 'content-type': 'application/json' }, body })
        .then(async (res) => {
          await res.body.arrayBuffer();
          if (res.statusCode !== 200) counts.errors += 1;
          else latencies.push(performance.now() - due);
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
  return { latencies, errors: counts.errors };
}

export async function runTailsBench(options: { rate: number; seconds: number; nodes: number; bodyFile: string }): Promise<TailsResult> {
  const body = await readFile(options.bodyFile);
  const upstream = await startNodeScript('bench/upstream.ts');
  const fleet = await startNodeScript('bench/fleet-server.ts', ['--nodes', String(options.nodes), '--models', '50']);
  const rows: TailsRow[] = [];
  try {
    const upstreamUrl = String(upstream.ready.url);
    const urls = (fleet.ready.urls as unknown[]).map(String);
    const measure = async (polls: TailsRow['polls'], base: string): Promise<void> => {
      const url = `${base}/v1/chat/completions`;
      await openLoop(url, body, options.rate, 1);
      const { latencies, errors } = await openLoop(url, body, options.rate, options.seconds);
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
      });
    };
    await measure('direct', upstreamUrl);
    for (const [polls, intervalS] of [
      ['running', 2],
      ['paused', 3600],
    ] as const) {
      const gateway = await startGateway(controlPlaneConfig(urls, intervalS, upstreamUrl));
      try {
        await sleepMs(3000);
        await measure(polls, gateway.url);
      } finally {
        await gateway.stop();
      }
    }
    return { nodes: options.nodes, rows };
  } finally {
    await fleet.stop();
    await upstream.stop();
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
  const result = await runTailsBench({ rate: Number(process.argv[2] ?? '1000'), seconds: Number(process.argv[3] ?? '5'), nodes: 100, bodyFile: file });
  await rm(dir, { recursive: true, force: true });
  process.stdout.write(`${JSON.stringify({ event: 'tails', ...result })}\n`);
}
