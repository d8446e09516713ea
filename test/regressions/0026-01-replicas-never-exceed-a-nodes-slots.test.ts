// Issue 26, item 1: two gateways in front of one llama-server each believed they owned every slot
// (with three replicas and 4 slots, 12 ran at once). With [cluster], the replicas share slot leases
// through Redis: 300 requests spread over three replicas never have more than 4 at the node at
// once, and none is lost. The store then holds no lease and no waiter.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startSlotCountingNode, type SlotCountingNode } from '#test/fixtures/slot-counting-node.ts';
import { startReplicas, type Replicas } from '#test/fixtures/cluster-replicas.ts';
import { postFresh } from '#test/fixtures/fresh-connection.ts';
import { waitForHost } from '#test/fixtures/context.ts';
import { eventually, httpJson } from '#test/fixtures/http.ts';

const SLOTS = 4;
const chat = (user: string): Record<string, unknown> => ({
  model: 'm',
  user,
  messages: [{ role: 'user', content: 'hi' }],
  max_tokens: 4,
});

let node: SlotCountingNode;
let replicas: Replicas | undefined;

before(async () => {
  node = await startSlotCountingNode({ slots: SLOTS, holdMs: 10 });
  replicas = await startReplicas({
    count: 3,
    nodes: [{ name: 'n', url: node.url, kind: 'llamacpp' }],
    extra: '[routing]\nmax_queue = 1000\nqueue_timeout = "120s"',
  });
  for (const gw of replicas.gateways) await waitForHost(gw, 'n', (h) => h.models?.m?.slots === SLOTS, 'slots known');
});
after(async () => {
  await replicas?.close();
  await node?.close();
});

test('300 requests over three replicas: at most 4 at the node at once, every one served', async () => {
  const gws = replicas?.gateways ?? [];
  const answers = await Promise.all(
    Array.from({ length: 300 }, (_, i) => postFresh(`${gws[i % gws.length]?.url}/v1/chat/completions`, chat(`u${i}`))),
  );
  assert.deepEqual([...new Set(answers.map((a) => a.status))], [200]);
  assert.equal(node.seen.served, 300);
  assert.ok(node.seen.peak <= SLOTS, `at most ${SLOTS} at once across the replicas (peak ${node.seen.peak})`);
  assert.equal(node.seen.peak, SLOTS, 'the burst did fill the node');
  for (const gw of gws) {
    await eventually(
      async () => {
        const runtime = JSON.parse((await httpJson('GET', `${gw.url}/admin/runtime`)).text) as {
          cluster?: { store: string; leases_held: number; waiters: number; live_replicas: number };
        };
        return (
          runtime.cluster?.store === 'shared' &&
          runtime.cluster.leases_held === 0 &&
          runtime.cluster.waiters === 0 &&
          runtime.cluster.live_replicas === 3
        );
      },
      10_000,
      'every replica shares the store, holds nothing and counts three replicas',
    );
  }
});
