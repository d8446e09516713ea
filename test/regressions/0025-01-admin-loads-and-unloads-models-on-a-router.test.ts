// Issue 25, item 1/2: the gateway knew which models a llama-server router had loaded but could only
// load one as a side effect of a request, and never unload one. POST /admin/models/load and
// /admin/models/unload now do it through the router's own /models/load and /models/unload
// (confirmed through its listing), behind the admin token, and an unload is refused while a request
// for the model is in flight.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startFleetAndGateway, type FleetAndGateway } from '#test/fixtures/in-process-fleet.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { nodeChanges, requestEnds } from '#test/fixtures/gateway-waits.ts';

const TOKEN = 'regression-0025-01-token';
const AUTH = { authorization: `Bearer ${TOKEN}` };

const FLEET = `
[[node]]
name = "router"
kind = "llamacpp-router"
models_max = 2
load_time = "30ms"
ttft = "20ms"
tokens_per_second = 1000

[[node.model]]
id = "model-a"
status = "loaded"

[[node.model]]
id = "model-b"
status = "unloaded"
`;

let rig: FleetAndGateway;

before(async () => {
  rig = await startFleetAndGateway(FLEET, (sim) =>
    gatewayToml([{ name: 'router', url: sim.url('router'), kind: 'llamacpp' }], `[admin]\ntoken = "${TOKEN}"\n`),
  );
  await untilEvent(
    async () => {
      const hosts = (await httpJson('GET', `${rig.gw.url}/admin/hosts`, undefined, AUTH)).json<{
        hosts: { name: string; loaded: string[] }[];
      }>();
      return hosts.hosts.find((h) => h.name === 'router')?.loaded.includes('model-a') === true;
    },
    [nodeChanges(rig.gw)],
    'the router discovered',
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

test('an admin load and unload act on the router, and need the token', async () => {
  const refused = await httpJson('POST', `${rig.gw.url}/admin/models/load`, { model: 'model-b', node: 'router' });
  assert.equal(refused.status, 401, refused.text);
  const loaded = await httpJson('POST', `${rig.gw.url}/admin/models/load`, { model: 'model-b', node: 'router' }, AUTH);
  assert.equal(loaded.status, 200, loaded.text);
  assert.equal(await routerStatus('model-b'), 'loaded');
  const unloaded = await httpJson('POST', `${rig.gw.url}/admin/models/unload`, { model: 'model-b', node: 'router' }, AUTH);
  assert.equal(unloaded.status, 200, unloaded.text);
  assert.equal(await routerStatus('model-b'), 'unloaded');
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
  assert.equal(await routerStatus('model-a'), 'loaded');
  assert.equal((await long).status, 200);
});
