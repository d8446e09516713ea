// Issue 25, item 3: `[[models.available]] pin = true`. An unload of a pinned model is refused with
// the reason, and a load on a full router unloads an idle model that is not pinned to make room
// (the router's own LRU choice could have been the pinned one). Before, the key was refused.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRouterRig, type RouterRig } from '#test/fixtures/router-fleet.ts';
import { httpJson } from '#test/fixtures/http.ts';

let rig: RouterRig;

before(async () => {
  rig = await startRouterRig({
    routers: [
      {
        models: [
          ['pinned', 'loaded'],
          ['other', 'loaded'],
          ['wanted', 'unloaded'],
        ],
      },
    ],
    gateway: '[[models.available]]\nname = "pinned"\npin = true\n',
  });
});

after(async () => {
  await rig?.close();
});

test('an unload of a pinned model is refused with its reason', async () => {
  const refused = await httpJson('POST', `${rig.gw.url}/admin/models/unload`, { model: 'pinned', node: 'router' });
  assert.equal(refused.status, 409, refused.text);
  assert.equal(refused.json().code, 'pinned');
  assert.equal(await rig.routerStatus('pinned'), 'loaded');
});

test('a load on the full router unloads the idle unpinned model, never the pinned one', async () => {
  const loaded = await httpJson('POST', `${rig.gw.url}/admin/models/load`, { model: 'wanted', node: 'router' });
  assert.equal(loaded.status, 200, loaded.text);
  assert.equal(loaded.json().evicted, 'other');
  assert.equal(await rig.routerStatus('pinned'), 'loaded');
  assert.equal(await rig.routerStatus('wanted'), 'loaded');
  assert.equal(await rig.routerStatus('other'), 'unloaded');
});
