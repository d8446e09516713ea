// Issue 38, item 13 (continued): an operator's hold bound only the replica it was made through.
// With [cluster] every replica runs its own reconciler (there is no leader lease for it), and the
// holds were kept in each replica's memory: on a llama-server router at --models-max 2 (one pinned
// model, one `warm`), a load with "evict_warm" through replica r0 was done and held there — and
// replica r1's next round, knowing no hold, unloaded it again to restore the warm model: done, then
// silently undone. What must hold: the hold is written to the cluster store (a key per node and
// model, its TTL the hold's length) and every replica's round reads it, so round after round of
// both replicas the load stands; GET /admin/models on either names the hold with its origin
// replica and end; the operator's unload through the other replica ends it everywhere, and the warm
// model comes back. The store lost: each replica keeps the holds it knows (and says so in GET
// /admin/models); the store back empty: the replica that made the hold writes it again.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { type GatewayUnderTest, type SimFleet, startSimFleet } from '#test/fixtures/in-process-fleet.ts';
import { startReplicas, type Replicas } from '#test/fixtures/cluster-replicas.ts';
import { httpJson, simRequests } from '#test/fixtures/http.ts';
import { RedisStore } from '#src/cluster/index.ts';
import { PINNED_WARM_DESIRED, pinnedWarmRouterFleet, routerKnownFull } from '#test/fixtures/pinned-warm-router.ts';
import { routerStatus as statusAt } from '#test/fixtures/router-fleet.ts';
import { type Trigger, untilEvent } from '#test/fixtures/events.ts';
import { nodeChanges } from '#test/fixtures/gateway-waits.ts';

let sim: SimFleet | undefined;
let replicas: Replicas | undefined;

before(async () => {
  sim = await startSimFleet(pinnedWarmRouterFleet());
  replicas = await startReplicas({
    count: 2,
    nodes: [{ name: 'router', url: sim.url('router'), kind: 'llamacpp' }],
    extra: PINNED_WARM_DESIRED,
  });
  for (const gw of replicas.gateways) await routerKnownFull(gw);
});

after(async () => {
  await replicas?.close();
  await sim?.close();
});

interface Held {
  node: string;
  state: string;
  by: string;
  replica: string | null;
  until: string | null;
  expires_in_ms: number;
}
interface ModelsView {
  models: { model: string; held: Held[] }[];
  nodes: { name: string; switch: unknown }[];
  reconciler?: { rounds: number; holds_kept_in: string; holds_lost: string | null };
}

const gateways = (): readonly GatewayUnderTest[] => replicas?.gateways ?? [];
/** What changes a replica's view: its registry's node events (each listing is followed by a reconciler round). */
const replicaChanges = (): Trigger[] => gateways().map(nodeChanges);
const routerActivity = (): Trigger => sim?.activity('router') ?? assert.fail('no sim');
const view = async (url: string): Promise<ModelsView> => (await httpJson('GET', `${url}/admin/models`)).json<ModelsView>();
const heldOf = async (url: string, model: string): Promise<Held[]> =>
  (await view(url)).models.find((m) => m.model === model)?.held ?? [];

const routerStatus = (model: string): Promise<string | undefined> => statusAt(sim?.url('router') ?? '', model);

const listingPolls = async (): Promise<number> =>
  (await simRequests(sim?.url('router') ?? '')).filter((r) => r.method === 'GET' && r.path === '/v1/models').length;

/** Waits for `polls` more listings of the router (each replica's poll is followed by its round), then for no switch under way. */
async function afterPolls(polls: number): Promise<void> {
  const from = await listingPolls();
  await untilEvent(
    async () => (await listingPolls()) >= from + polls,
    [routerActivity()],
    `${polls} listing polls of the router`,
  );
  for (const gw of gateways())
    await untilEvent(
      async () => (await view(gw.url)).nodes.find((n) => n.name === 'router')?.switch === null,
      [nodeChanges(gw)],
      'no switch under way on the router',
    );
}

/** Waits until every replica's reconciler has ended `rounds` more rounds. */
async function afterRoundsOfEach(rounds: number): Promise<void> {
  for (const gw of gateways()) {
    const from = (await view(gw.url)).reconciler?.rounds;
    assert.ok(from !== undefined, "GET /admin/models counts the reconciler's rounds");
    await untilEvent(
      async () => ((await view(gw.url)).reconciler?.rounds ?? 0) >= from + rounds,
      [nodeChanges(gw)],
      `${rounds} reconciler rounds on ${gw.url}`,
    );
  }
}

test('a load held through replica r0 stands round after round of both replicas; either names the hold and its replica', async () => {
  const [r0, r1] = gateways();
  assert.ok(r0 && r1);
  const loaded = await httpJson('POST', `${r0.url}/admin/models/load`, { model: 'extra', node: 'router', evict_warm: true });
  assert.equal(loaded.status, 200, loaded.text);
  assert.equal(loaded.json<{ outcome: string }>().outcome, 'done');
  assert.equal(loaded.json<{ evicted?: string }>().evicted, 'hot');

  await afterPolls(10);
  assert.equal(await routerStatus('extra'), 'loaded', "no replica's reconciler undid the operator's load");
  assert.equal(await routerStatus('hot'), 'unloaded');
  await afterRoundsOfEach(4);
  await afterPolls(2);
  assert.equal(await routerStatus('extra'), 'loaded', 'still loaded after rounds of both replicas');
  assert.equal(await routerStatus('hot'), 'unloaded');
  assert.equal(await routerStatus('keep'), 'loaded');
  for (const gw of [r0, r1]) {
    const undone = gw.logs().filter((l) => l.event === 'model_action' && l.origin === 'reconciler');
    assert.deepEqual(undone, [], 'no reconciler action on the router from either replica');
    const models = await view(gw.url);
    const held = models.models.find((m) => m.model === 'extra')?.held ?? [];
    assert.deepEqual(
      held.map((h) => [h.node, h.state, h.by, h.replica]),
      [['router', 'loaded', 'operator', 'r0']],
      JSON.stringify(models),
    );
    assert.ok((held[0]?.expires_in_ms ?? 0) > 0 && held[0]?.until !== null);
    assert.equal(models.reconciler?.holds_kept_in, 'cluster');
    assert.equal(models.reconciler?.holds_lost, null);
  }
});

test("the operator's unload through replica r1 ends the hold everywhere, and the warm model comes back", async () => {
  const [r0, r1] = gateways();
  assert.ok(r0 && r1);
  const unloaded = await httpJson('POST', `${r1.url}/admin/models/unload`, { model: 'extra', node: 'router' });
  assert.equal(unloaded.status, 200, unloaded.text);
  await untilEvent(async () => (await routerStatus('hot')) === 'loaded', [...replicaChanges()], 'hot restored by a reconciler');
  assert.equal(await routerStatus('extra'), 'unloaded');
  for (const gw of [r0, r1])
    await untilEvent(async () => (await heldOf(gw.url, 'extra')).length === 0, [nodeChanges(gw)], `the hold gone on ${gw.url}`);
  await afterRoundsOfEach(2);
  assert.equal(await routerStatus('hot'), 'loaded');
  assert.deepEqual(await heldOf(r0.url, 'extra'), []);
});

test('the store lost: each replica keeps the hold it knows and says so; back empty, the replica that made it writes it again', async () => {
  const [r0, r1] = gateways();
  assert.ok(r0 && r1 && replicas);
  const loaded = await httpJson('POST', `${r0.url}/admin/models/load`, { model: 'extra', node: 'router', evict_warm: true });
  assert.equal(loaded.status, 200, loaded.text);
  await untilEvent(
    async () => (await heldOf(r1.url, 'extra')).some((h) => h.replica === 'r0'),
    [nodeChanges(r1)],
    "r1 reads r0's hold",
  );
  await replicas.redis.kill();
  for (const gw of [r0, r1])
    await untilEvent(
      async () => ((await view(gw.url)).reconciler?.holds_lost ?? null) !== null,
      [nodeChanges(gw)],
      `${gw.url} says the holds' store is lost`,
    );
  assert.match((await view(r1.url)).reconciler?.holds_lost ?? '', /ECONNREFUSED|127\.0\.0\.1/);
  await afterPolls(6);
  assert.equal(await routerStatus('extra'), 'loaded', 'no replica undid the load while the store was lost');
  assert.deepEqual(
    (await heldOf(r1.url, 'extra')).map((h) => h.replica),
    ['r0'],
    'r1 keeps the hold it read',
  );
  await replicas.redis.restart();
  const store = new RedisStore({
    url: replicas.redis.url,
    password: undefined,
    replica: 'reader',
    leaseTtlMs: 3_000,
    callTimeoutMs: 2_000,
    prefix: replicas.prefix,
  });
  try {
    await store.connect();
    await untilEvent(
      async () => {
        const listed = await store.listHolds().catch(() => []);
        return listed.some((h) => h.model === 'extra' && h.kind === 'loaded' && h.replica === 'r0');
      },
      [...replicaChanges()],
      'r0 wrote its hold again into the restarted (empty) store',
    );
  } finally {
    await store.close();
  }
  for (const gw of [r0, r1])
    await untilEvent(
      async () => (await view(gw.url)).reconciler?.holds_lost === null,
      [nodeChanges(gw)],
      `${gw.url} reads the store again`,
    );
  assert.equal(await routerStatus('extra'), 'loaded');
});
