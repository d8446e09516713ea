// Issue 26, item 3: each model's queue order across replicas. A node with one slot, three
// replicas, twelve requests sent in turn to the next replica, each once the one before it waits:
// the node serves them in the order they arrived, whichever replica each reached (the global
// queue's tickets; within the tolerance stated in docs/deploy.md, which even spreading meets).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { type SlotCountingNode } from '#test/fixtures/slot-counting-node.ts';
import { type Replicas } from '#test/fixtures/cluster-replicas.ts';
import { startSlotReplicas, userChat, type SlotReplicas } from '#test/fixtures/slot-replicas.ts';
import { postFresh, type Answer } from '#test/fixtures/fresh-connection.ts';
import { hostsOf } from '#test/fixtures/context.ts';
import { eventually, httpJson } from '#test/fixtures/http.ts';
import { untilEvent } from '#test/fixtures/events.ts';

const chat = userChat;

let rig: SlotReplicas | undefined;
let node: SlotCountingNode;
let replicas: Replicas | undefined;

before(async () => {
  rig = await startSlotReplicas({
    node: { slots: 1, holdMs: 5 },
    count: 3,
    extra: '[routing]\nmax_queue = 100\nqueue_timeout = "60s"',
  });
  ({ node, replicas } = rig);
});
after(() => rig?.close());

/** Requests waiting anywhere: in the global queue (each replica's waiters) or a replica's own queue. */
async function waiting(urls: readonly string[]): Promise<number> {
  const counts = await Promise.all(
    urls.map(async (url) => {
      const runtime = JSON.parse((await httpJson('GET', `${url}/admin/runtime`)).text) as { cluster?: { waiters: number } };
      return (runtime.cluster?.waiters ?? 0) + ((await hostsOf(url)).queue_depth.m ?? 0);
    }),
  );
  return counts.reduce((a, b) => a + b, 0);
}

test('twelve requests spread over three replicas reach a one-slot node in the order they arrived', async () => {
  const urls = (replicas?.gateways ?? []).map((gw) => gw.url);
  node.pause();
  const sent: Promise<Answer>[] = [postFresh(`${urls[0]}/v1/chat/completions`, chat('r0'))];
  await untilEvent(() => node.seen.running === 1, [node.changes], 'r0 holds the slot');
  for (let i = 1; i < 12; i += 1) {
    sent.push(postFresh(`${urls[i % urls.length]}/v1/chat/completions`, chat(`r${i}`)));
    await eventually(async () => (await waiting(urls)) === i, 10_000, `r${i} waits`);
  }
  node.resume();
  const answers = await Promise.all(sent);
  assert.deepEqual([...new Set(answers.map((a) => a.status))], [200]);
  assert.deepEqual(
    node.seen.order,
    Array.from({ length: 12 }, (_, i) => `r${i}`),
  );
  assert.equal(node.seen.peak, 1);
});
