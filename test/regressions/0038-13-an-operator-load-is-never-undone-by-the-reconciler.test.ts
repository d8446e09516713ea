// Issue 38, item 13: the reconciler undid the operator. On a llama-server router at --models-max 2
// running a pinned model and a `warm` one, POST /admin/models/load of a third answered `done` —
// evicting the warm one — and the reconciler's next round unloaded it again to restore the warm
// one. What must hold: such a load is refused up front (409 `warm`) naming the warm model it would
// cost and the pinned one holding the other slot; with `"evict_warm": true` it is done and held
// ([models] operator_hold, shown in GET /admin/models with its end): round after round the
// reconciler leaves it loaded; once the operator unloads it, the warm model comes back. An unload
// of the warm model that the reconciler would load there again is refused and overridden alike.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { RouterRig } from '#test/fixtures/router-fleet.ts';
import { startPinnedWarmRouter } from '#test/fixtures/pinned-warm-router.ts';
import { httpJson, simRequests } from '#test/fixtures/http.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { nodeChanges } from '#test/fixtures/gateway-waits.ts';

let rig: RouterRig;

before(async () => {
  rig = await startPinnedWarmRouter();
});

after(async () => {
  await rig?.close();
});

/** The router's listing polls so far (each is followed by a reconciler round). */
async function listingPolls(): Promise<number> {
  return (await simRequests(rig.sim.url('router'))).filter((r) => r.method === 'GET' && r.path === '/v1/models').length;
}

interface ModelsView {
  models: {
    model: string;
    next: { node: string }[];
    held: { node: string; state: string; by: string; until: string | null; expires_in_ms: number }[];
  }[];
  nodes: { name: string; busy: boolean; switch: unknown }[];
}

const view = async (): Promise<ModelsView> => (await httpJson('GET', `${rig.gw.url}/admin/models`)).json<ModelsView>();

/** Waits until the router has been listed `rounds` more times and no switch is under way there. */
async function afterRounds(rounds: number): Promise<void> {
  const from = await listingPolls();
  await untilEvent(
    async () => (await listingPolls()) >= from + rounds,
    [rig.sim.activity('router')],
    `${rounds} listing polls (reconciler rounds)`,
  );
  await untilEvent(
    async () => (await view()).nodes.find((n) => n.name === 'router')?.switch === null,
    [nodeChanges(rig.gw)],
    'no switch under way on the router',
  );
}

test('a load that would cost the warm model is refused up front, naming it and the pinned one', async () => {
  const refused = await httpJson('POST', `${rig.gw.url}/admin/models/load`, { model: 'extra', node: 'router' });
  assert.equal(refused.status, 409, refused.text);
  const body = refused.json<{ outcome: string; code: string; detail: string }>();
  assert.equal(body.outcome, 'refused');
  assert.equal(body.code, 'warm');
  assert.match(body.detail, /warm 'hot'/);
  assert.match(body.detail, /pinned 'keep'/);
  assert.match(body.detail, /"evict_warm": true/);
  assert.equal(await rig.routerStatus('hot'), 'loaded', 'nothing was unloaded');
  assert.equal(await rig.routerStatus('extra'), 'unloaded');
});

test('with "evict_warm": true the load is done, held, and still loaded after several reconciler rounds', async () => {
  const loaded = await httpJson('POST', `${rig.gw.url}/admin/models/load`, { model: 'extra', node: 'router', evict_warm: true });
  assert.equal(loaded.status, 200, loaded.text);
  const body = loaded.json<{ outcome: string; evicted?: string; heldUntil?: string; detail: string }>();
  assert.equal(body.outcome, 'done');
  assert.equal(body.evicted, 'hot', 'the warm model made room, never the pinned one');
  assert.ok(
    body.heldUntil !== undefined && Date.parse(body.heldUntil) > Date.now(),
    `the answer says until when it holds: ${loaded.text}`,
  );
  assert.match(body.detail, /held there by the operator until/);

  await afterRounds(6);
  assert.equal(await rig.routerStatus('extra'), 'loaded', "the reconciler left the operator's load");
  assert.equal(await rig.routerStatus('hot'), 'unloaded');
  assert.equal(await rig.routerStatus('keep'), 'loaded');
  const undone = rig.gw.logs().filter((l) => l.event === 'model_action' && l.origin === 'reconciler');
  assert.deepEqual(undone, [], 'no reconciler action on the router');
  const models = await view();
  const held = models.models.find((m) => m.model === 'extra')?.held ?? [];
  assert.equal(held.length, 1, JSON.stringify(models));
  assert.equal(held[0]?.node, 'router');
  assert.equal(held[0]?.by, 'operator');
  assert.equal(held[0]?.state, 'loaded');
  assert.ok((held[0]?.expires_in_ms ?? 0) > 0 && held[0]?.until !== null);
  assert.deepEqual(
    models.models.find((m) => m.model === 'hot')?.next,
    [],
    'the plan does not restore hot there while the hold lasts',
  );
});

test('once the operator unloads it, the hold ends and the warm model comes back', async () => {
  const unloaded = await httpJson('POST', `${rig.gw.url}/admin/models/unload`, { model: 'extra', node: 'router' });
  assert.equal(unloaded.status, 200, unloaded.text);
  await untilEvent(
    async () => (await rig.routerStatus('hot')) === 'loaded',
    [nodeChanges(rig.gw)],
    'hot restored by the reconciler',
  );
  assert.deepEqual((await view()).models.find((m) => m.model === 'extra')?.held, []);
});

test('an unload of the warm model is refused the same way; with "evict_warm": true it stays off the router round after round', async () => {
  await afterRounds(1);
  const refused = await httpJson('POST', `${rig.gw.url}/admin/models/unload`, { model: 'hot', node: 'router' });
  assert.equal(refused.status, 409, refused.text);
  assert.equal(refused.json<{ code: string }>().code, 'warm');
  assert.match(refused.json<{ detail: string }>().detail, /the reconciler would load it there again/);
  assert.equal(await rig.routerStatus('hot'), 'loaded');
  const unloaded = await httpJson('POST', `${rig.gw.url}/admin/models/unload`, {
    model: 'hot',
    node: 'router',
    evict_warm: true,
  });
  assert.equal(unloaded.status, 200, unloaded.text);
  assert.ok(unloaded.json<{ heldUntil?: string }>().heldUntil !== undefined, unloaded.text);
  await afterRounds(6);
  assert.equal(await rig.routerStatus('hot'), 'unloaded', "the reconciler left the operator's unload");
  assert.deepEqual(
    (await view()).models.find((m) => m.model === 'hot')?.held.map((h) => [h.node, h.state]),
    [['router', 'unloaded']],
  );
});
