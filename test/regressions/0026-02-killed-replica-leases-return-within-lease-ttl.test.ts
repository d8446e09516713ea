// Issue 26, item 2: a replica that dies holding leases must not keep the node's slots. Replica B
// (its own process) holds all 4 slots mid-stream when it is killed with SIGKILL; replica A's
// waiting request gets a slot once B's leases expire: after at least part of lease_ttl (B's leases
// were still counted: the node freed its connections at once, the store had to forget them) and
// within lease_ttl plus one fallback poll.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startSlotCountingNode, type SlotCountingNode } from '#test/fixtures/slot-counting-node.ts';
import { startRedisServer, type RedisServer } from '#test/fixtures/redis-server.ts';
import { clusterTable } from '#test/fixtures/cluster-replicas.ts';
import { gatewayToml, startGatewayProcess, type GatewayProcess } from '#test/fixtures/processes.ts';
import { startGateway, type GatewayUnderTest } from '#test/fixtures/in-process-fleet.ts';
import { postFresh, type Answer } from '#test/fixtures/fresh-connection.ts';
import { waitForHost } from '#test/fixtures/context.ts';
import { eventually } from '#test/fixtures/http.ts';

const SLOTS = 4;
const TTL_MS = 2_000;
const PREFIX = 'kill-test:';
const chat = (user: string): Record<string, unknown> => ({ model: 'm', user, messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 });

let node: SlotCountingNode;
let redis: RedisServer | undefined;
let a: GatewayUnderTest | undefined;
let b: GatewayProcess | undefined;

before(async () => {
  node = await startSlotCountingNode({ slots: SLOTS, holdMs: 5 });
  redis = await startRedisServer();
  const toml = (replica: string): string => gatewayToml([{ name: 'n', url: node.url, kind: 'llamacpp' }], `${clusterTable(redis?.url ?? '', replica, PREFIX, `${TTL_MS}ms`)}\n[routing]\nqueue_timeout = "60s"`);
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
  const held = Array.from({ length: SLOTS }, (_, i) => postFresh(`${b?.url}/v1/chat/completions`, chat(`b${i}`)).catch(() => ({ status: 0 })));
  await eventually(() => node.seen.running === SLOTS, 20_000, 'replica b holds every slot');
  const waiting: Promise<Answer> = postFresh(`${a.url}/v1/chat/completions`, chat('a0'));
  // a's request waits in the global queue: the node sees nothing new.
  await eventually(async () => {
    const runtime = await fetch(`${a?.url}/admin/runtime`).then((r) => r.json() as Promise<{ cluster?: { waiters: number } }>);
    return runtime.cluster?.waiters === 1;
  }, 10_000, 'a waits across the replicas');
  assert.equal(node.seen.running, SLOTS);
  b.process.child.kill('SIGKILL');
  const killedAt = performance.now();
  // The node sees b's connections close at once; the store still counts b's leases.
  await eventually(() => node.seen.order.includes('a0'), 20_000, 'a0 reaches the node');
  const tookMs = performance.now() - killedAt;
  t.diagnostic(`a0 reached the node ${Math.round(tookMs)} ms after the kill (lease_ttl ${TTL_MS} ms); b held the slots after ${Math.round(killedAt - startedAt)} ms`);
  node.resume();
  assert.equal((await waiting).status, 200);
  await Promise.all(held);
  assert.ok(tookMs >= TTL_MS / 2, `b's leases were still counted for a while after the kill (${Math.round(tookMs)} ms)`);
  assert.ok(tookMs <= TTL_MS + 2_000, `the slots came back within lease_ttl (${TTL_MS} ms) and one poll (took ${Math.round(tookMs)} ms)`);
});
