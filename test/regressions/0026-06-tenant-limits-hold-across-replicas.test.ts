// Issue 26, tenant limits across replicas: each replica had its own limits ledger, so a tenant
// with requests_per_minute = 5 behind three replicas got 15 a minute (5 at each), and its
// max_concurrent held per replica, not per tenant. With [cluster], a limited tenant's request is
// checked and reserved in the store in one atomic step: exactly 5 are admitted across the three,
// exactly max_concurrent run at once. With the store lost, each replica falls back to its share
// of each limit (limit / live replicas, at least 1), not to the whole limit.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startSlotCountingNode, type SlotCountingNode } from '#test/fixtures/slot-counting-node.ts';
import { startReplicas, type Replicas } from '#test/fixtures/cluster-replicas.ts';
import { postFresh, type Answer } from '#test/fixtures/fresh-connection.ts';
import { waitForHost } from '#test/fixtures/context.ts';
import { eventually, httpJson } from '#test/fixtures/http.ts';

const TENANTS = `
[[tenants]]
name = "rpm"
keys = ["sk-rpm-26"]
requests_per_minute = 5
max_concurrent = 10

[[tenants]]
name = "conc"
keys = ["sk-conc-26"]
max_concurrent = 2

[[tenants]]
name = "share"
keys = ["sk-share-26"]
requests_per_minute = 6
`;

const chat = (user: string): Record<string, unknown> => ({
  model: 'm',
  user,
  messages: [{ role: 'user', content: 'hi' }],
  max_tokens: 4,
});

let node: SlotCountingNode;
let replicas: Replicas | undefined;

before(async () => {
  node = await startSlotCountingNode({ slots: 64, holdMs: 5 });
  replicas = await startReplicas({
    count: 3,
    nodes: [{ name: 'n', url: node.url, kind: 'llamacpp' }],
    extra: `[routing]\nmax_queue = 1000\nqueue_timeout = "60s"\n${TENANTS}`,
  });
  for (const gw of replicas.gateways) await waitForHost(gw, 'n', (h) => h.models?.m?.slots === 64, 'slots known');
  for (const gw of replicas.gateways) {
    await eventually(
      async () =>
        (
          JSON.parse((await httpJson('GET', `${gw.url}/admin/runtime`)).text) as {
            cluster?: { store: string; live_replicas: number };
          }
        ).cluster?.live_replicas === 3,
      10_000,
      'three replicas counted',
    );
  }
});
after(async () => {
  replicas?.redis.resume();
  node?.resume();
  await replicas?.close();
  await node?.close();
});

function post(url: string, key: string, user: string): Promise<Answer> {
  return postFresh(`${url}/v1/chat/completions`, chat(user), { authorization: `Bearer ${key}` });
}

function statuses(answers: readonly Answer[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const a of answers) counts[a.status] = (counts[a.status] ?? 0) + 1;
  return counts;
}

test('requests_per_minute = 5 behind three replicas: exactly 5 admitted across them', async () => {
  const gws = replicas?.gateways ?? [];
  const answers = await Promise.all(
    Array.from({ length: 15 }, (_, i) => post(gws[i % gws.length]?.url ?? '', 'sk-rpm-26', `r${i}`)),
  );
  assert.deepEqual(statuses(answers), { 200: 5, 429: 10 }, 'exactly the limit is admitted across the replicas');
  const refused = answers.find((a) => a.status === 429);
  assert.match(refused?.text ?? '', /requests/i, 'the refusal names the request rate');
});

test('max_concurrent = 2 behind three replicas: two run at once, the others are refused', async () => {
  const gws = replicas?.gateways ?? [];
  node.pause();
  const settled: Answer[] = [];
  const pending = Array.from({ length: 6 }, (_, i) =>
    post(gws[i % gws.length]?.url ?? '', 'sk-conc-26', `c${i}`).then((a) => (settled.push(a), a)),
  );
  try {
    await eventually(
      () => settled.filter((a) => a.status === 429).length === 4 && node.seen.running === 2,
      20_000,
      'four refused while two run',
    );
  } finally {
    node.resume();
  }
  const answers = await Promise.all(pending);
  assert.deepEqual(statuses(answers), { 200: 2, 429: 4 });
  // Settled: the tenant's requests left the shared count, so two more run.
  const again = await Promise.all([post(gws[0]?.url ?? '', 'sk-conc-26', 'd0'), post(gws[1]?.url ?? '', 'sk-conc-26', 'd1')]);
  assert.deepEqual(statuses(again), { 200: 2 });
});

test('store lost: each replica admits its share of the limit (6 / 3 live = 2), not the whole limit', async () => {
  const gws = replicas?.gateways ?? [];
  replicas?.redis.pause();
  try {
    for (const gw of gws) {
      const answers: Answer[] = [];
      for (let i = 0; i < 4; i += 1) answers.push(await post(gw.url, 'sk-share-26', `s${i}`));
      assert.deepEqual(statuses(answers), { 200: 2, 429: 2 }, `${gw.url}: its share, 2 of 6`);
    }
  } finally {
    replicas?.redis.resume();
  }
});
