// Issue 26, rejoin: while the store was lost each replica admitted a tenant's requests by its
// share of the limits, alone, and settled them in its own ledger only: when the store answered
// again, the shared day budget had never heard of them (the tenant got its fallback usage on top
// of the day's budget), a reserve sent just as the store paused reached it late and stayed
// counted for ever, and the UTC day key was the replica's own (a replica whose clock was already
// in tomorrow had a budget of its own). Now the fallback usage is added to the shared counters
// at the rejoin, once (a batch id), each request is settled once in one place, and the day is
// the store's (TIME).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'iovalkey';
import { systemClock, type Clock } from '#src/core/clock.ts';
import { msToNextDay, utcDay } from '#src/tenants/index.ts';
import { startSlotCountingNode, type SlotCountingNode } from '#test/fixtures/slot-counting-node.ts';
import { clusterTable, startReplicas, type Replicas } from '#test/fixtures/cluster-replicas.ts';
import { startRedisServer, type RedisServer } from '#test/fixtures/redis-server.ts';
import { startGateway, type GatewayUnderTest } from '#test/fixtures/in-process-fleet.ts';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { postFresh, type Answer } from '#test/fixtures/fresh-connection.ts';
import { waitForHost } from '#test/fixtures/context.ts';
import { eventually, httpJson } from '#test/fixtures/http.ts';
import { untilEvent } from '#test/fixtures/events.ts';

const TTL_MS = 1_000;
/** Every answer states 10 + 30 tokens: what each request uses (its reservation is larger). */
const USED = 40;
const BUDGET = 1_200;
const tenantToml = (name: string, budget: number): string =>
  `[[tenants]]\nname = "${name}"\nkeys = ["sk-${name}-26"]\ntokens_per_day = ${budget}\n`;
const ROUTING = '[routing]\nmax_queue = 1000\nqueue_timeout = "60s"\n';

let node: SlotCountingNode;
let replicas: Replicas | undefined;
let raw: Redis | undefined;
// The skewed-clock case: its own server and two replicas.
let skewRedis: RedisServer | undefined;
let skewRaw: Redis | undefined;
const skewGateways: GatewayUnderTest[] = [];

before(async () => {
  node = await startSlotCountingNode({ slots: 64, holdMs: 2, usage: { prompt_tokens: 10, completion_tokens: 30 } });
  replicas = await startReplicas({
    count: 3,
    nodes: [{ name: 'n', url: node.url, kind: 'llamacpp' }],
    leaseTtl: `${TTL_MS}ms`,
    extra: `${ROUTING}${tenantToml('day', BUDGET)}`,
  });
  raw = new Redis(replicas.redis.url, { lazyConnect: true, maxRetriesPerRequest: 0, commandTimeout: 5_000 });
  raw.on('error', () => {});
  await raw.connect();
  for (const gw of replicas.gateways) await waitForHost(gw, 'n', (h) => h.models?.m?.slots === 64, 'slots known');
  for (const gw of replicas.gateways)
    await eventually(async () => (await clusterOf(gw.url))?.live_replicas === 3, 20_000, 'three replicas counted');
});
after(async () => {
  replicas?.redis.resume();
  skewRedis?.resume();
  node?.resume();
  raw?.disconnect();
  skewRaw?.disconnect();
  await Promise.allSettled(skewGateways.map((gw) => gw.close()));
  await skewRedis?.stop();
  await replicas?.close();
  await node?.close();
});

interface ClusterDoc {
  readonly store: string;
  readonly live_replicas: number;
  readonly tenant_usage_unconfirmed?: number;
}

async function clusterOf(url: string): Promise<ClusterDoc | undefined> {
  return (JSON.parse((await httpJson('GET', `${url}/admin/runtime`)).text) as { cluster?: ClusterDoc }).cluster;
}

/** Every replica in `store` mode; for shared, also with nothing of its fallback left unconfirmed (absent = nothing to wait for). */
async function allIn(urls: readonly string[], store: 'shared' | 'fallback', what: string): Promise<void> {
  await eventually(
    async () =>
      (await Promise.all(urls.map(clusterOf))).every(
        (c) => c?.store === store && (store === 'fallback' || (c.tenant_usage_unconfirmed ?? 0) === 0),
      ),
    30_000,
    what,
  );
}

function post(url: string, tenant: string, user: string): Promise<Answer> {
  return postFresh(
    `${url}/v1/chat/completions`,
    { model: 'm', user, messages: [{ role: 'user', content: 'hi' }], max_tokens: 30 },
    { authorization: `Bearer sk-${tenant}-26` },
  );
}

async function serial(url: string, tenant: string, count: number, label: string): Promise<void> {
  for (let i = 0; i < count; i += 1) assert.equal((await post(url, tenant, `${label}${i}`)).status, 200, `${label}${i} admitted`);
}

async function storeDay(client: Redis | undefined): Promise<string> {
  const [seconds] = (await client?.time()) ?? [0];
  return utcDay(Number(seconds) * 1000);
}

async function dayTokens(client: Redis | undefined, prefix: string, tenant: string): Promise<number> {
  return Number((await client?.get(`${prefix}tenant{${tenant}}:day:${await storeDay(client)}`)) ?? 0);
}

test(
  'the store paused past lease_ttl: what each replica used alone is in the shared day once, and the budget refuses at the sum',
  { timeout: 180_000 },
  async (t) => {
    const gws = replicas?.gateways ?? [];
    const urls = gws.map((gw) => gw.url);
    const [r0, r1, r2] = urls;
    const redis = replicas?.redis;
    const prefix = replicas?.prefix ?? '';
    assert.ok(r0 !== undefined && r1 !== undefined && r2 !== undefined && redis !== undefined);
    // Shared: 2 requests on r0 and r1, in the store as they settle.
    await serial(r0, 'day', 2, 'a');
    await serial(r1, 'day', 2, 'b');
    await eventually(async () => (await dayTokens(raw, prefix, 'day')) === 4 * USED, 10_000, 'the shared settles counted');
    // One request reserved in the store and still running when the store goes (the node holds it).
    node.pause();
    let open: Promise<Answer> | undefined;
    let late: Promise<Answer> | undefined;
    try {
      open = post(r2, 'day', 'open');
      await untilEvent(() => node.seen.running === 1, [node.changes], 'the open request at the node');
      const reserved = (await dayTokens(raw, prefix, 'day')) - 4 * USED;
      assert.ok(reserved > USED, `its reservation is counted (${reserved})`);
      redis.pause();
      const pausedAt = Date.now();
      // Sent at once: r0 may still think the store is there (its reserve then reaches the store late).
      late = post(r0, 'day', 'late');
      await allIn(urls, 'fallback', 'every replica fell back');
      node.resume();
      assert.equal((await open).status, 200, 'the open request ends (in fallback)');
      assert.equal((await late).status, 200, "the late one too (admitted by r0's share)");
      await sleep(Math.max(0, TTL_MS * 1.5 - (Date.now() - pausedAt)));
      // Alone: 3 requests on each replica (each within its share, 1200 / 3).
      for (const [i, url] of urls.entries()) await serial(url, 'day', 3, `f${i}-`);
      t.diagnostic(
        `store paused for ${Date.now() - pausedAt} ms (lease_ttl ${TTL_MS} ms); reservation ${reserved} tokens per request`,
      );
      redis.resume();
      await allIn(urls, 'shared', 'every replica rejoined and the store confirmed its fallback usage');
      for (const gw of gws)
        t.diagnostic(
          `${gw.url}: ${JSON.stringify(
            gw
              .logs()
              .filter((l) => String(l.msg).startsWith('tenant usage of the fallback'))
              .map(({ tenants, repeated, tokens, settles, failed }) => ({ tenants, repeated, tokens, settles, failed })),
          )}`,
        );
      const used = 4 + 1 + 1 + 9;
      assert.equal(
        await dayTokens(raw, prefix, 'day'),
        used * USED,
        'the shared day is the sum of what every replica used, once (not lost, not doubled)',
      );
      assert.equal(Number(await raw?.hlen(`${prefix}tenant{day}:open`)), 0, 'no reservation left open in the store');
      // The budget from here: admitted while the day plus one reservation fits.
      const expected = Math.floor((BUDGET - reserved - used * USED) / USED) + 1;
      let admitted = 0;
      let refusal: Answer | undefined;
      for (let i = 0; i < expected + 5 && refusal === undefined; i += 1) {
        const answer = await post(urls[i % urls.length] ?? r0, 'day', `z${i}`);
        if (answer.status === 200) admitted += 1;
        else refusal = answer;
      }
      assert.equal(
        admitted,
        expected,
        `the budget refuses at the right point (${BUDGET} − ${used * USED} used, ${reserved} reserved each)`,
      );
      assert.equal(refusal?.status, 429);
      assert.match(refusal?.text ?? '', /budget|per day|tokens_per_day/i, 'the refusal names the day budget');
    } finally {
      redis.resume();
      node.resume();
      await Promise.allSettled([open, late]);
    }
  },
);

test(
  "a replica whose clock is already in tomorrow shares today's budget (the store's day), in fallback too",
  { timeout: 120_000 },
  async () => {
    skewRedis = await startRedisServer();
    skewRaw = new Redis(skewRedis.url, { lazyConnect: true, maxRetriesPerRequest: 0, commandTimeout: 5_000 });
    skewRaw.on('error', () => {});
    await skewRaw.connect();
    const prefix = `t${randomBytes(4).toString('hex')}:`;
    const skewMs = msToNextDay(Date.now()) + 3_600_000;
    const ahead: Clock = {
      now: () => Date.now() + skewMs,
      monotonicMs: () => systemClock.monotonicMs(),
      setTimeout: (fn, ms) => systemClock.setTimeout(fn, ms),
    };
    for (const [i, clock] of [systemClock, ahead].entries()) {
      const toml = gatewayToml(
        [{ name: 'n', url: node.url, kind: 'llamacpp' }],
        `${clusterTable(skewRedis.url, `s${i}`, prefix, `${TTL_MS}ms`)}\n${ROUTING}${tenantToml('skew', 400)}`,
      );
      skewGateways.push(await startGateway(toml, { logLevel: 'info', clock }));
    }
    const [now, tomorrow] = skewGateways.map((gw) => gw.url);
    assert.ok(now !== undefined && tomorrow !== undefined);
    for (const url of [now, tomorrow]) await waitForHost(url, 'n', (h) => h.models?.m?.slots === 64, 'slots known');
    for (const url of [now, tomorrow])
      await eventually(async () => (await clusterOf(url))?.live_replicas === 2, 20_000, 'two replicas counted');
    let admitted = 0;
    for (let i = 0; i < 20; i += 1) {
      const answer = await post(now, 'skew', `k${i}`);
      if (answer.status !== 200) break;
      admitted += 1;
    }
    assert.ok(admitted > 0 && admitted < 20, `the budget spent on the replica in step (${admitted} admitted)`);
    const other = await post(tomorrow, 'skew', 'tomorrow');
    assert.equal(
      other.status,
      429,
      "the replica a day ahead is refused: the same day budget (the store's day), not one of its own",
    );
    const keys = async (): Promise<string[]> => (await skewRaw?.keys(`${prefix}tenant{skew}:day:*`)) ?? [];
    const today = `${prefix}tenant{skew}:day:${await storeDay(skewRaw)}`;
    assert.deepEqual(await keys(), [today], "one day key: the store's today");
    assert.equal(await dayTokens(skewRaw, prefix, 'skew'), admitted * USED);
    // In fallback, the replica ahead counts its usage on the store's day (the offset it last saw).
    skewRedis.pause();
    try {
      await allIn([tomorrow], 'fallback', 'the replica ahead fell back');
      assert.equal((await post(tomorrow, 'skew', 'alone')).status, 200, 'admitted by its share (400 / 2), its own day unused');
    } finally {
      skewRedis.resume();
    }
    await allIn([now, tomorrow], 'shared', 'both rejoined, the fallback usage confirmed');
    assert.deepEqual(await keys(), [today], 'still one day key');
    assert.equal(
      await dayTokens(skewRaw, prefix, 'skew'),
      (admitted + 1) * USED,
      "the fallback request counted on the store's day",
    );
  },
);
