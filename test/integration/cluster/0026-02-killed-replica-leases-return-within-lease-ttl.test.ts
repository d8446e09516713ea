// Issue 26, item 2: a replica that dies holding leases must not keep the node's slots. Replica B
// (its own process) holds all 4 slots mid-stream when it is killed with SIGKILL; replica A's
// waiting request gets a slot once B's leases expire: not before the store's last lease of B ran out
// (B's leases were still counted: the node freed its connections at once, the store had to forget
// them; read from the store itself, since B renews every lease_ttl/3 and a loaded machine delays the
// renewals) and within lease_ttl plus one fallback poll.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startSlotCountingNode, type SlotCountingNode } from '#test/fixtures/slot-counting-node.ts';
import { userChat } from '#test/fixtures/slot-replicas.ts';
import { startRedisServer, type RedisServer } from '#test/fixtures/redis-server.ts';
import { clusterTable } from '#test/fixtures/cluster-replicas.ts';
import { gatewayToml, startGatewayProcess, type GatewayProcess } from '#test/fixtures/processes.ts';
import { startGateway, type GatewayUnderTest } from '#test/fixtures/in-process-fleet.ts';
import { postFresh, type Answer } from '#test/fixtures/fresh-connection.ts';
import { waitForHost } from '#test/fixtures/context.ts';
import { eventually } from '#test/fixtures/http.ts';
import { Redis } from 'iovalkey';
import { pairKeys } from '#src/cluster/lua.ts';
import { untilEvent } from '#test/fixtures/events.ts';

const SLOTS = 4;
const TTL_MS = 2_000;
const PREFIX = 'kill-test:';
const chat = userChat;

let node: SlotCountingNode;
let redis: RedisServer | undefined;
let a: GatewayUnderTest | undefined;
let b: GatewayProcess | undefined;

/** How long until the last lease of the pair runs out, by the store's clock (≤ 0: none is left). */
const LAST_LEASE_LEFT = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
if last[2] == nil then return 0 end
return tonumber(last[2]) - now`;

async function lastLeaseLeftMs(url: string): Promise<number> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 5_000, commandTimeout: 5_000 });
  try {
    await client.connect();
    return Number(await client.eval(LAST_LEASE_LEFT, 1, pairKeys(PREFIX, 'n', 'm').leases));
  } finally {
    client.disconnect();
  }
}

before(async () => {
  node = await startSlotCountingNode({ slots: SLOTS, holdMs: 5 });
  redis = await startRedisServer();
  const toml = (replica: string): string =>
    gatewayToml(
      [{ name: 'n', url: node.url, kind: 'llamacpp' }],
      `${clusterTable(redis?.url ?? '', replica, PREFIX, `${TTL_MS}ms`)}\n[routing]\nqueue_timeout = "60s"`,
    );
  a = await startGateway(toml('a'), { logLevel: 'info' });
  b = await startGatewayProcess(toml('b'));
  for (const url of [a.url, b.url]) await waitForHost(url, 'n', (h) => h.models?.m?.slots === SLOTS, 'slots known');
});
after(async () => {
  node?.resume();
  b?.process.child.kill('SIGKILL');
  await b?.stop();
  await a?.close();
  await redis?.stop();
  await node?.close();
});

test('SIGKILL a replica holding every slot: the slots come back within lease_ttl', async (t) => {
  assert.ok(a !== undefined && b !== undefined);
  const startedAt = performance.now();
  node.pause();
  const held = Array.from({ length: SLOTS }, (_, i) =>
    postFresh(`${b?.url}/v1/chat/completions`, chat(`b${i}`)).catch(() => ({ status: 0 })),
  );
  await untilEvent(() => node.seen.running === SLOTS, [node.changes], 'replica b holds every slot');
  const waiting: Promise<Answer> = postFresh(`${a.url}/v1/chat/completions`, chat('a0'));
  // a's request waits in the global queue: the node sees nothing new.
  await eventually(
    async () => {
      const runtime = await fetch(`${a?.url}/admin/runtime`).then((r) => r.json() as Promise<{ cluster?: { waiters: number } }>);
      return runtime.cluster?.waiters === 1;
    },
    10_000,
    'a waits across the replicas',
  );
  assert.equal(node.seen.running, SLOTS);
  b.process.child.kill('SIGKILL');
  const killedAt = performance.now();
  // The store's clock is read during the call, after `asked`: b's last lease ends no sooner than
  // this after the kill (timed from before the call: a busy machine may answer it late).
  const asked = performance.now();
  const leftAtKill = asked - killedAt + (await lastLeaseLeftMs(redis?.url ?? ''));
  assert.ok(leftAtKill > 0, `b's leases were still in the store when it was killed (${Math.round(leftAtKill)} ms left)`);
  // The node sees b's connections close at once; the store still counts b's leases.
  await untilEvent(() => node.seen.order.includes('a0'), [node.changes], 'a0 reaches the node');
  const tookMs = performance.now() - killedAt;
  t.diagnostic(
    `a0 reached the node ${Math.round(tookMs)} ms after the kill (b's last lease had ${Math.round(leftAtKill)} ms left, lease_ttl ${TTL_MS} ms); b held the slots after ${Math.round(killedAt - startedAt)} ms`,
  );
  node.resume();
  assert.equal((await waiting).status, 200);
  await Promise.all(held);
  // 5 ms: the store's clock is read in whole milliseconds.
  assert.ok(
    tookMs >= leftAtKill - 5,
    `b's leases were still counted until they ran out in the store (${Math.round(tookMs)} ms, ${Math.round(leftAtKill)} ms left at the kill)`,
  );
  // An upper bound only tells how busy the machine is (the lower bound above is the claim: b's
  // leases are counted until the store expires them, and not an instant longer than the wait):
  // generous, to catch leases that never come back.
  assert.ok(
    tookMs <= TTL_MS + 30_000,
    `the slots came back after lease_ttl (${TTL_MS} ms) and the next poll (took ${Math.round(tookMs)} ms)`,
  );
});
