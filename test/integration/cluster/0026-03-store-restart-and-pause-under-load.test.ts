// Issue 26, item 4: losing the store. Under a steady load over three replicas, Redis is restarted
// (every lease and script gone), then paused (SIGSTOP) for longer than lease_ttl. No request
// hangs (every one is answered, none waits longer than the bounded store calls and its queue
// allow); each replica falls back to its share of the node's slots while the store is paused and
// says so in /health and /admin/runtime; once the store answers again the replicas register the
// leases they hold again, and no slot is used twice at once after the recovery.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { type SlotCountingNode } from '#test/fixtures/slot-counting-node.ts';
import { type Replicas } from '#test/fixtures/cluster-replicas.ts';
import { startSlotReplicas, type SlotReplicas } from '#test/fixtures/slot-replicas.ts';
import { startClusterLoad } from '#test/fixtures/cluster-load.ts';
import { eventually, httpJson } from '#test/fixtures/http.ts';
import { untilEvent } from '#test/fixtures/events.ts';

const SLOTS = 4;
const TTL_MS = 2_000;

let rig: SlotReplicas | undefined;
let node: SlotCountingNode;
let replicas: Replicas | undefined;

before(async () => {
  rig = await startSlotReplicas({
    node: { slots: SLOTS, holdMs: 15 },
    count: 3,
    leaseTtl: `${TTL_MS}ms`,
    extra: '[routing]\nmax_queue = 1000\nqueue_timeout = "60s"',
  });
  ({ node, replicas } = rig);
});
after(() => rig?.close());

interface ClusterDoc {
  readonly store: string;
  readonly store_losses: number;
  readonly fallback_reason?: string;
}

async function clusterOf(url: string, path: '/admin/runtime' | '/health'): Promise<ClusterDoc | undefined> {
  return (JSON.parse((await httpJson('GET', `${url}${path}`)).text) as { cluster?: ClusterDoc }).cluster;
}

async function allIn(urls: readonly string[], store: 'shared' | 'fallback', what: string): Promise<void> {
  await eventually(
    async () => (await Promise.all(urls.map((u) => clusterOf(u, '/admin/runtime')))).every((c) => c?.store === store),
    20_000,
    what,
  );
}

async function servedMore(count: number): Promise<void> {
  const target = node.seen.served + count;
  await untilEvent(() => node.seen.served >= target, [node.changes], `${count} more served`);
}

test('a restart and a pause of the store under load: nothing hangs, the slots are never used twice once it is back', async (t) => {
  const urls = (replicas?.gateways ?? []).map((gw) => gw.url);
  const redis = replicas?.redis;
  assert.ok(redis !== undefined);
  const load = startClusterLoad(urls, 12);
  try {
    await servedMore(30);
    assert.ok(node.seen.peak <= SLOTS, `before: peak ${node.seen.peak}`);

    // A restart: the server comes back empty (no persistence); the replicas register what they hold.
    await redis.restart();
    await allIn(urls, 'shared', 'every replica shares the store again after the restart');
    await servedMore(20);
    node.seen.peak = node.seen.running;
    await servedMore(40);
    assert.ok(node.seen.peak <= SLOTS, `after the restart: at most ${SLOTS} at once (peak ${node.seen.peak})`);

    // A pause longer than lease_ttl: every replica falls back, and says so.
    node.seen.peak = node.seen.running;
    redis.pause();
    await allIn(urls, 'fallback', 'every replica fell back');
    for (const url of urls) {
      const health = await clusterOf(url, '/health');
      assert.equal(health?.store, 'fallback', 'the detailed /health shows it');
      assert.ok((health?.fallback_reason ?? '') !== '', 'with the reason');
    }
    const servedBefore = node.seen.served;
    await sleep(TTL_MS * 1.5);
    assert.ok(node.seen.served > servedBefore, 'requests go on in fallback (each replica within its share)');
    redis.resume();
    await allIn(urls, 'shared', 'every replica rejoined');
    t.diagnostic(
      `peak at the node from the pause to the rejoin: ${node.seen.peak} (fallback share ${Math.floor(SLOTS / 3)} per replica, plus the leases already out when the store went)`,
    );
    // From the rejoin on, the store counts every lease held: never more than the slots at once.
    node.seen.peak = node.seen.running;
    await servedMore(60);
    assert.ok(node.seen.peak <= SLOTS, `after the pause: at most ${SLOTS} at once (peak ${node.seen.peak})`);
  } finally {
    redis.resume();
    await load.stop();
  }
  const statuses = [...new Set(load.answers.map((a) => a.status))];
  assert.deepEqual(statuses, [200], `every request answered 200 (${JSON.stringify(statuses)})`);
  const slowest = Math.max(...load.answers.map((a) => a.ms));
  assert.ok(slowest < 20_000, `no request hung (slowest ${Math.round(slowest)} ms)`);
  for (const gw of replicas?.gateways ?? []) {
    const doc = await clusterOf(gw.url, '/admin/runtime');
    const losses = doc?.store_losses ?? 0;
    assert.ok(losses >= 1, `the loss is counted (${JSON.stringify(doc)})`);
    const logged = gw.logs().filter((l) => String(l.msg).startsWith('cluster store lost')).length;
    assert.equal(logged, losses, 'each loss is logged once');
  }
  t.diagnostic(`answers: ${load.answers.length}, slowest ${Math.round(slowest)} ms`);
});
