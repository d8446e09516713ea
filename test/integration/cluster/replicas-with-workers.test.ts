// [cluster] with [server] workers = 2 in each replica: the workers admit through the owner's
// admission, which holds the shared lease, so two replicas × two workers still never exceed the
// node's 4 slots.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startSlotCountingNode, type SlotCountingNode } from '#test/fixtures/slot-counting-node.ts';
import { startReplicas, type Replicas } from '#test/fixtures/cluster-replicas.ts';
import { postFresh } from '#test/fixtures/fresh-connection.ts';
import { waitForHost } from '#test/fixtures/context.ts';

const SLOTS = 4;
let node: SlotCountingNode;
let replicas: Replicas | undefined;

before(async () => {
  node = await startSlotCountingNode({ slots: SLOTS, holdMs: 10 });
  replicas = await startReplicas({
    count: 2,
    workers: 2,
    nodes: [{ name: 'n', url: node.url, kind: 'llamacpp' }],
    extra: '[routing]\nmax_queue = 1000\nqueue_timeout = "120s"',
  });
  for (const gw of replicas.gateways) await waitForHost(gw, 'n', (h) => h.models?.m?.slots === SLOTS, 'slots known');
});
after(async () => {
  await replicas?.close();
  await node?.close();
});

test('two replicas with two workers each: at most 4 at the node at once', async () => {
  const gws = replicas?.gateways ?? [];
  const answers = await Promise.all(
    Array.from({ length: 120 }, (_, i) =>
      postFresh(`${gws[i % gws.length]?.url}/v1/chat/completions`, {
        model: 'm',
        user: `u${i}`,
        messages: [{ role: 'user', content: 'hi' }],
        max_tokens: 4,
      }),
    ),
  );
  assert.deepEqual([...new Set(answers.map((a) => a.status))], [200]);
  assert.equal(node.seen.served, 120);
  assert.ok(node.seen.peak <= SLOTS, `peak ${node.seen.peak}`);
});
