// Issue 25, item 1/2: the gateway knew which models a llama-server router had loaded but could only
// load one as a side effect of a request, and never unload one. POST /admin/models/load and
// /admin/models/unload now do it through the router's own /models/load and /models/unload
// (confirmed through its listing), behind the admin token, and an unload is refused while a request
// for the model is in flight.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRouterRig, type RouterRig } from '#test/fixtures/router-fleet.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { nodeChanges, requestEnds } from '#test/fixtures/gateway-waits.ts';

const TOKEN = 'regression-0025-01-token';
const AUTH = { authorization: `Bearer ${TOKEN}` };

let rig: RouterRig;

before(async () => {
  rig = await startRouterRig({
    routers: [
      {
        more: ['ttft = "20ms"', 'tokens_per_second = 1000'],
        models: [
          ['model-a', 'loaded'],
          ['model-b', 'unloaded'],
        ],
      },
    ],
    token: TOKEN,
  });
});

after(async () => {
  await rig?.close();
});

test('an admin load and unload act on the router, and need the token', async () => {
  const refused = await httpJson('POST', `${rig.gw.url}/admin/models/load`, { model: 'model-b', node: 'router' });
  assert.equal(refused.status, 401, refused.text);
  const loaded = await httpJson('POST', `${rig.gw.url}/admin/models/load`, { model: 'model-b', node: 'router' }, AUTH);
  assert.equal(loaded.status, 200, loaded.text);
  assert.equal(await rig.routerStatus('model-b'), 'loaded');
  const unloaded = await httpJson('POST', `${rig.gw.url}/admin/models/unload`, { model: 'model-b', node: 'router' }, AUTH);
  assert.equal(unloaded.status, 200, unloaded.text);
  assert.equal(await rig.routerStatus('model-b'), 'unloaded');
});

test('an unload with a request in flight is refused and does not happen', async () => {
  const long = httpJson('POST', `${rig.gw.url}/v1/chat/completions`, {
    model: 'model-a',
    messages: [{ role: 'user', content: 'hi' }],
    max_tokens: 2000,
  });
  await untilEvent(
    async () => {
      const hosts = (await httpJson('GET', `${rig.gw.url}/admin/hosts`, undefined, AUTH)).json<{
        hosts: { name: string; in_flight: number }[];
      }>();
      return (hosts.hosts.find((h) => h.name === 'router')?.in_flight ?? 0) > 0;
    },
    [requestEnds(rig.gw), nodeChanges(rig.gw)],
    'the request in flight',
  );
  const refused = await httpJson('POST', `${rig.gw.url}/admin/models/unload`, { model: 'model-a', node: 'router' }, AUTH);
  assert.equal(refused.status, 409, refused.text);
  assert.equal(refused.json().code, 'in_flight');
  assert.equal(await rig.routerStatus('model-a'), 'loaded');
  assert.equal((await long).status, 200);
});
