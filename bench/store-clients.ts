// Measures the three Redis clients on the admission round trip with a store: one EVALSHA of the
// acquire script and one of the release script (what a request costs in [cluster] when a slot is
// free), sequentially, against a local redis-server. p50/p99 per round trip and the heap each
// client costs. Prints one JSON line. Run: node bench/store-clients.ts [calls]

import { startRedisServer } from '#test/fixtures/redis-server.ts';
import { ACQUIRE, pairKeys, RELEASE } from '#src/cluster/lua.ts';
import { percentile, round } from './stats.ts';

interface Evaluator {
  load(lua: string): Promise<string>;
  evalsha(sha: string, keys: readonly string[], args: readonly string[]): Promise<unknown>;
  close(): Promise<void>;
}

async function ioredisLike(pkg: 'ioredis' | 'iovalkey', url: string): Promise<Evaluator> {
  const mod = await import(pkg);
  const client = new mod.Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: 1000,
  });
  await client.connect();
  return {
    load: async (lua) => String(await client.script('LOAD', lua)),
    evalsha: (sha, keys, args) => client.evalsha(sha, keys.length, ...keys, ...args),
    close: async () => void (await client.quit()),
  };
}

async function nodeRedis(url: string): Promise<Evaluator> {
  const { createClient } = await import('redis');
  const client = createClient({ url, socket: { connectTimeout: 1000 } });
  await client.connect();
  return {
    load: (lua) => client.scriptLoad(lua),
    evalsha: (sha, keys, args) => client.evalSha(sha, { keys: [...keys], arguments: [...args] }),
    close: async () => void (await client.close()),
  };
}

export interface StoreClientResult {
  readonly client: string;
  readonly calls: number;
  readonly p50Us: number;
  readonly p99Us: number;
  readonly heapKb: number;
}

async function measure(name: string, connect: () => Promise<Evaluator>, calls: number): Promise<StoreClientResult> {
  globalThis.gc?.();
  const heapBefore = process.memoryUsage().heapUsed;
  const client = await connect();
  const heapKb = Math.max(0, (process.memoryUsage().heapUsed - heapBefore) / 1024);
  const acquire = await client.load(ACQUIRE);
  const release = await client.load(RELEASE);
  const keys = pairKeys('bench:', 'gpu-1', 'llama');
  const samples: number[] = [];
  for (let i = 0; i < calls + 200; i++) {
    const id = `r1/${i}`;
    const start = process.hrtime.bigint();
    await client.evalsha(acquire, [keys.leases, keys.queue, keys.waits, keys.ticket], [id, `w${i}`, '4', '10000', 'bench:freed']);
    await client.evalsha(release, [keys.leases], [id, 'bench:freed']);
    if (i >= 200) samples.push(Number(process.hrtime.bigint() - start) / 1000);
  }
  await client.close();
  return {
    client: name,
    calls,
    p50Us: round(percentile(samples, 50)),
    p99Us: round(percentile(samples, 99)),
    heapKb: round(heapKb),
  };
}

export async function runStoreClients(calls: number): Promise<StoreClientResult[]> {
  const redis = await startRedisServer();
  try {
    const results: StoreClientResult[] = [];
    // Twice each, interleaved: the second pass is the figure (the first warms the server and the JIT).
    for (let pass = 0; pass < 2; pass++) {
      const round1 = [
        await measure('iovalkey', () => ioredisLike('iovalkey', redis.url), calls),
        await measure('ioredis', () => ioredisLike('ioredis', redis.url), calls),
        await measure('redis', () => nodeRedis(redis.url), calls),
      ];
      if (pass === 1) results.push(...round1);
    }
    return results;
  } finally {
    await redis.stop();
  }
}

if (import.meta.main) {
  const calls = Number(process.argv[2] ?? 3000);
  console.log(JSON.stringify(await runStoreClients(calls)));
}
