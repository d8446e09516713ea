// Issue 38, item 6: a store answer that is not a number admitted nothing. With [cluster], a store
// answering the bulk string "abc" to every script made live_replicas NaN and every acquire a
// "queued" that never ended: no request was admitted (429 queue_timeout, the node idle) while
// /health said the store was shared, and the store was never taken as lost. Its error reasons
// named the client library's internals ("Stream isn't writeable and enableOfflineQueue options is
// false") instead of the store and the cause. Now every answer is decoded at the port: a nonsense
// answer is a lost store (fallback, requests admitted under this replica's share, /health and the
// metrics say so with the reason), and a reason names the store's address and the root cause
// (`redis://127.0.0.1:P/0: connect ECONNREFUSED 127.0.0.1:P`). The hostile store is a fake RESP
// server (test/fixtures/fake-resp-store.ts); the refused one is a port nobody listens on.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { startFakeRespStore, type FakeRespStore } from '#test/fixtures/fake-resp-store.ts';
import { startSlotCountingNode, type SlotCountingNode } from '#test/fixtures/slot-counting-node.ts';
import { startGateway, type GatewayUnderTest } from '#test/fixtures/in-process-fleet.ts';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { clusterTable } from '#test/fixtures/cluster-replicas.ts';
import { freePort } from '#test/fixtures/redis-server.ts';
import { waitForHost } from '#test/fixtures/context.ts';
import { eventually, httpJson } from '#test/fixtures/http.ts';
import { metricValue } from '#test/integration/mesh/helpers.ts';

const SLOTS = 2;
const REQUESTS = 6;

const closers: (() => Promise<void>)[] = [];
after(async () => {
  for (const close of closers.reverse()) await close().catch(() => undefined);
});

interface ClusterDoc {
  readonly store?: string;
  readonly live_replicas?: number;
  readonly fallback_reason?: string;
}

async function clusterOf(gw: GatewayUnderTest): Promise<ClusterDoc | undefined> {
  return (JSON.parse((await httpJson('GET', `${gw.url}/health`)).text) as { cluster?: ClusterDoc }).cluster;
}

/**
 * `leaseTtl` bounds each store call (lease_ttl / 5, at most 1 s): with "5s" a call has the whole
 * second, so on a loaded machine the fake store's nonsense answer, not the call's timeout, is what
 * the gateway hears.
 */
async function gatewayOn(store: string, node: SlotCountingNode, leaseTtl = '1s'): Promise<GatewayUnderTest> {
  // A queue timeout far above an admission under the share, short enough that a gate admitting nothing fails in seconds.
  const toml = gatewayToml(
    [{ name: 'n', url: node.url, kind: 'llamacpp' }],
    `${clusterTable(store, 'r0', 't38:', leaseTtl)}\n[routing]\nmax_queue = 100\nqueue_timeout = "8s"`,
  );
  const gw = await startGateway(toml, { logLevel: 'info' });
  closers.push(() => gw.close());
  await waitForHost(gw, 'n', (h) => h.models?.m?.slots === SLOTS, 'slots known');
  return gw;
}

async function served(gw: GatewayUnderTest): Promise<number[]> {
  const ask = (i: number) =>
    httpJson('POST', `${gw.url}/v1/chat/completions`, {
      model: 'm',
      user: `c${i}`,
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 4,
    });
  return (await Promise.all(Array.from({ length: REQUESTS }, (_, i) => ask(i)))).map((a) => a.status);
}

test('a store answering "abc" to every script is a lost store: requests are admitted under the fallback share, /health names the answer', async (t) => {
  const store: FakeRespStore = await startFakeRespStore();
  closers.push(() => store.close());
  const node = await startSlotCountingNode({ slots: SLOTS, holdMs: 30 });
  closers.push(() => node.close());
  const gw = await gatewayOn(store.url, node, '5s');

  const statuses = await served(gw);
  assert.deepEqual(
    statuses,
    Array(REQUESTS).fill(200),
    `every request admitted (before: 429 queue_timeout for each, the node idle): ${JSON.stringify(statuses)}`,
  );
  assert.equal(node.seen.served, REQUESTS);
  assert.ok(node.seen.peak <= SLOTS, `within this replica's share: at most ${SLOTS} at once (peak ${node.seen.peak})`);
  assert.ok((store.asked.get('EVALSHA') ?? 0) > 0, `the store was asked its scripts (${JSON.stringify([...store.asked])})`);

  const doc = await clusterOf(gw);
  assert.equal(doc?.store, 'fallback', `the detailed /health shows the store lost: ${JSON.stringify(doc)}`);
  assert.equal(doc?.live_replicas, 1, 'the live count stays a number (this replica alone)');
  const reason = doc?.fallback_reason ?? '';
  assert.match(
    reason,
    new RegExp(`^redis://127\\.0\\.0\\.1:${store.port}/0: store answered "abc" to [a-z ]+: expected `),
    `the reason names the store, the answer and the call: ${reason}`,
  );
  t.diagnostic(`fallback_reason: ${reason}`);
  assert.equal(metricValue(await gw.metrics(), 'gateway_cluster_store_up'), 0, 'gateway_cluster_store_up = 0');
  assert.ok(metricValue(await gw.metrics(), 'gateway_cluster_store_losses') >= 1, 'the loss is counted');
  const lost = gw.logs().filter((l) => String(l.msg).startsWith('cluster store lost'));
  assert.ok(
    lost.length >= 1 && lost.every((l) => String(l.reason).includes('store answered "abc"')),
    `logged as a lost store, with the reason: ${JSON.stringify(lost)}`,
  );
});

test("a refused connection: the reason names the store address and ECONNREFUSED, never the client library's sentence", async () => {
  const port = await freePort();
  const node = await startSlotCountingNode({ slots: SLOTS, holdMs: 5 });
  closers.push(() => node.close());
  const url = `redis://127.0.0.1:${port}/0`;
  const gw = await gatewayOn(url, node);

  const expected = `${url}: connect ECONNREFUSED 127.0.0.1:${port}`;
  // The reason is refreshed at each probe of the store; every one names the address and the cause.
  await eventually(
    async () => (await clusterOf(gw))?.fallback_reason === expected,
    20_000,
    `fallback_reason "${expected}" (was: ${JSON.stringify(await clusterOf(gw))})`,
  );
  assert.deepEqual(await served(gw), Array(REQUESTS).fill(200), 'requests are admitted meanwhile');
  const doc = await clusterOf(gw);
  assert.equal(doc?.fallback_reason, expected);
  const reasons = gw.logs().flatMap((l) => (l.reason === undefined ? [] : [String(l.reason)]));
  assert.ok(reasons.length >= 1, 'the loss is logged with its reason');
  for (const r of reasons)
    assert.doesNotMatch(r, /enableOfflineQueue|Stream isn't writeable|Connection is closed/, `no client library internals: ${r}`);
});
