// Issue 26, item 7 (wakes): each replica kept its own wake window, so three replicas woke one
// sleeping node three times. With [cluster] the replicas take the node's wake window in the store
// (SET NX PX wake_timeout): 60 manual wakes spread over three replicas run the wake command once;
// the others answer 'in_window'.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '#src/config-tables.ts';
import { Gateway } from '#src/main.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { startRedisServer, type RedisServer } from '#test/fixtures/redis-server.ts';
import { clusterTable } from '#test/fixtures/cluster-replicas.ts';

let dir: string;
let wakeLog: string;
let redis: RedisServer | undefined;
const gateways: Gateway[] = [];

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'switchyard-wake-'));
  wakeLog = join(dir, 'wakes.log');
  redis = await startRedisServer();
  const command = JSON.stringify(['/bin/sh', '-c', `echo woke >> '${wakeLog}'; sleep 0.2`]);
  for (const replica of ['r0', 'r1', 'r2']) {
    const toml = `[server]\nlisten = "127.0.0.1:0"\n[[nodes]]\nname = "sleeper"\nurl = "http://127.0.0.1:1"\nkind = "vllm"\nwake = { command = ${command} }\nwake_timeout = "10m"\n${clusterTable(redis.url, replica, 'wake-test:', '5s')}`;
    const loaded = loadConfig(toml, {});
    assert.ok(loaded.ok, JSON.stringify(loaded));
    gateways.push(await Gateway.start({ config: loaded.config, logger: pino({ level: 'silent' }) }));
  }
});

after(async () => {
  await Promise.allSettled(gateways.map((gw) => gw.close()));
  await redis?.stop();
  await rm(dir, { recursive: true, force: true });
});

test('60 manual wakes of one node over three replicas run its wake command once', async () => {
  const answers = await Promise.all(
    Array.from({ length: 60 }, (_, i) => httpJson('POST', `${gateways[i % 3]?.url}/admin/wake?node=sleeper`)),
  );
  const results = answers.map((a) => a.json<{ result: string }>().result);
  assert.equal(results.filter((r) => r === 'sent').length, 1, JSON.stringify(results));
  assert.equal(results.filter((r) => r === 'in_window').length, 59);
  const lines = (await readFile(wakeLog, 'utf8')).split('\n').filter((l) => l !== '');
  assert.equal(lines.length, 1, 'the wake command ran once across the replicas');
});
