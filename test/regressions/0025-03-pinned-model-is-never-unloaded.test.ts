// Issue 25, item 3: `[[models.available]] pin = true`. An unload of a pinned model is refused with
// the reason, and a load on a full router unloads an idle model that is not pinned to make room
// (the router's own LRU choice could have been the pinned one). Before, the key was refused.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startFleetAndGateway, type FleetAndGateway } from '#test/fixtures/in-process-fleet.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { nodeChanges } from '#test/fixtures/gateway-waits.ts';

const FLEET = `
[[node]]
name = "router"
kind = "llamacpp-router"
models_max = 2
load_time = "30ms"

[[node.model]]
id = "pinned"
status = "loaded"

[[node.model]]
id = "other"
status = "loaded"

[[node.model]]
id = "wanted"
status = "unloaded"
`;

let rig: FleetAndGateway;

before(async () => {
  rig = await startFleetAndGateway(FLEET, (sim) =>
    gatewayToml(
      [{ name: 'router', url: sim.url('router'), kind: 'llamacpp' }],
      '[[models.available]]\nname = "pinned"\npin = true\n',
    ),
  );
  await untilEvent(
    async () => {
      const hosts = (await httpJson('GET', `${rig.gw.url}/admin/hosts`)).json<{
        hosts: { name: string; loaded: string[]; router?: { max_instances?: number } }[];
      }>();
      const router = hosts.hosts.find((h) => h.name === 'router');
      return router?.router?.max_instances === 2 && router.loaded.length === 2;
    },
    [nodeChanges(rig.gw)],
    'the router discovered, full',
  );
});

after(async () => {
  await rig?.close();
});

async function routerStatus(model: string): Promise<string | undefined> {
  const list = (await httpJson('GET', `${rig.sim.url('router')}/models`)).json<{
    data: { id: string; status: { value: string } }[];
  }>();
  return list.data.find((m) => m.id === model)?.status.value;
}

test('an unload of a pinned model is refused with its reason', async () => {
  const refused = await httpJson('POST', `${rig.gw.url}/admin/models/unload`, { model: 'pinned', node: 'router' });
  assert.equal(refused.status, 409, refused.text);
  assert.equal(refused.json().code, 'pinned');
  assert.equal(await routerStatus('pinned'), 'loaded');
});

test('a load on the full router unloads the idle unpinned model, never the pinned one', async () => {
  const loaded = await httpJson('POST', `${rig.gw.url}/admin/models/load`, { model: 'wanted', node: 'router' });
  assert.equal(loaded.status, 200, loaded.text);
  assert.equal(loaded.json().evicted, 'other');
  assert.equal(await routerStatus('pinned'), 'loaded');
  assert.equal(await routerStatus('wanted'), 'loaded');
  assert.equal(await routerStatus('other'), 'unloaded');
});
