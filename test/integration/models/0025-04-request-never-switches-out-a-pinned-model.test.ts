// Issue 25, item 4 (pins hold against request-driven switches): a client request for a model a full
// router does not run made the router evict its least recently used model, which could be the
// pinned one. Now the gateway names the victim itself (idle, never pinned) and unloads it first;
// when every model the router could give up is pinned, the router is excluded with `pinned` (503,
// /admin/explain and the exclusion metric say so) and the pinned model stays loaded.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRouterRig, type RouterRig } from '#test/fixtures/router-fleet.ts';
import { simRequests, type JsonResponse } from '#test/fixtures/http.ts';
import { chat as chatAt } from '#test/fixtures/gateway-state.ts';

let rig: RouterRig;

before(async () => {
  rig = await startRouterRig({
    routers: [
      {
        name: 'solo',
        modelsMax: 1,
        loadTime: '20ms',
        models: [
          ['keeper', 'loaded'],
          ['visitor', 'unloaded'],
        ],
      },
      {
        name: 'duo',
        loadTime: '20ms',
        models: [
          ['anchor', 'loaded'],
          ['idle', 'loaded'],
          ['guest', 'unloaded'],
        ],
      },
    ],
    gateway:
      '[routing]\nqueue_timeout = "3s"\n[[models.available]]\nname = "keeper"\npin = true\n[[models.available]]\nname = "anchor"\npin = true\n',
  });
});

after(async () => {
  await rig?.close();
});

const chat = (model: string): Promise<JsonResponse> => chatAt(rig.gw.url, model, { max_tokens: 2 });

test('a request whose only router is full of pinned models is refused with `pinned`; the pinned model stays loaded', async () => {
  const answer = await chat('visitor');
  assert.equal(answer.status, 503, answer.text);
  assert.match(answer.text, /pinned/);
  assert.equal(await rig.routerStatus('keeper', 'solo'), 'loaded', 'the pinned model was not switched out');
  assert.equal(await rig.routerStatus('visitor', 'solo'), 'unloaded');
  const explained = await rig.gw.explain('model=visitor');
  const verdict = explained.nodes.find((n) => n.node === 'solo');
  assert.equal(verdict?.reason, 'pinned', JSON.stringify(explained));
  const metric = (await rig.gw.metrics()).split('\n').find((l) => l.includes('reason="pinned"'));
  assert.ok(metric !== undefined, 'the exclusion is counted by its reason');
});

test('on a full router with an idle unpinned model the gateway unloads that one first, never the pinned (least recently used) one', async () => {
  const answer = await chat('guest');
  assert.equal(answer.status, 200, answer.text);
  assert.equal(await rig.routerStatus('anchor', 'duo'), 'loaded', 'the pinned model stays');
  assert.equal(await rig.routerStatus('idle', 'duo'), 'unloaded', 'the idle unpinned model made room');
  assert.equal(await rig.routerStatus('guest', 'duo'), 'loaded');
  const unloads = (await simRequests(rig.sim.url('duo'))).filter((r) => r.method === 'POST' && r.path === '/models/unload');
  assert.equal(unloads.length, 1, 'the gateway sent the unload itself, before the request loaded its model');
});
