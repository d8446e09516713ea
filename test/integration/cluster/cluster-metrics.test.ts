// Issue 26, losing the store as the metrics tell it: a replica sharing the store reports
// gateway_cluster_store_up 1 and the live replicas; while the store is paused (SIGSTOP) its calls
// time out and the replica falls back: store_up 0 and one more store loss; once the store answers
// again, store_up 1. Two replicas in this process on a real redis-server.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startReplicas, type Replicas } from '#test/fixtures/cluster-replicas.ts';
import { eventually } from '#test/fixtures/http.ts';
import { metricValue } from '#test/integration/mesh/helpers.ts';

let replicas: Replicas | undefined;

before(async () => {
  replicas = await startReplicas({
    count: 2,
    leaseTtl: '1500ms',
    nodes: [{ name: 'n', url: 'http://127.0.0.1:9', kind: 'llamacpp' }],
  });
});
after(async () => {
  replicas?.redis.resume();
  await replicas?.close();
});

test('gateway_cluster_* metrics: shared, then fallback while the store is paused (one loss more), then shared again', async () => {
  const gw = replicas?.gateways[0];
  assert.ok(gw !== undefined && replicas !== undefined);
  const metric = async (name: string): Promise<number> => metricValue(await gw.metrics(), name);
  await eventually(
    async () => (await metric('gateway_cluster_store_up')) === 1 && (await metric('gateway_cluster_live_replicas')) === 2,
    20_000,
    'shared, two replicas counted',
  );
  assert.equal(await metric('gateway_cluster_leases_held'), 0);
  assert.equal(await metric('gateway_cluster_waiters'), 0);
  const losses = await metric('gateway_cluster_store_losses');
  replicas.redis.pause();
  try {
    await eventually(
      async () => (await metric('gateway_cluster_store_up')) === 0,
      20_000,
      'store_up 0 while the store is paused',
    );
    assert.equal(await metric('gateway_cluster_store_losses'), losses + 1, 'one loss more, counted once');
  } finally {
    replicas.redis.resume();
  }
  await eventually(
    async () => (await metric('gateway_cluster_store_up')) === 1,
    20_000,
    'store_up 1 once the store answers again',
  );
  assert.equal(await metric('gateway_cluster_store_losses'), losses + 1);
});
