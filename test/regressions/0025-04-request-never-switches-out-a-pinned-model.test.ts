// Issue 25, item 4 (pins hold against request-driven switches): a client request for a model a full
// router does not run made the router evict its least recently used model, which could be the
// pinned one. Now the gateway names the victim itself (idle, never pinned) and unloads it first;
// when every model the router could give up is pinned, the router is excluded with `pinned` (503,
// /admin/explain and the exclusion metric say so) and the pinned model stays loaded.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startFleetAndGateway, type FleetAndGateway } from '#test/fixtures/in-process-fleet.ts';
import { waitForHost } from '#test/fixtures/admin-readers.ts';
import { httpJson, simRequests } from '#test/fixtures/http.ts';

const FLEET = `
[[node]]
name = "solo"
kind = "llamacpp-router"
models_max = 1
load_time = "20ms"

[[node.model]]
id = "keeper"
status = "loaded"

[[node.model]]
id = "visitor"
status = "unloaded"

[[node]]
name = "duo"
kind = "llamacpp-router"
models_max = 2
load_time = "20ms"

[[node.model]]
id = "anchor"
status = "loaded"

[[node.model]]
id = "idle"
status = "loaded"

[[node.model]]
id = "guest"
status = "unloaded"
`;

let rig: FleetAndGateway;

before(async () => {
  rig = await startFleetAndGateway(FLEET, (sim) =>
    gatewayToml(
      [
        { name: 'solo', url: sim.url('solo'), kind: 'llamacpp' },
        { name: 'duo', url: sim.url('duo'), kind: 'llamacpp' },
      ],
      '[routing]\nqueue_timeout = "3s"\n[[models.available]]\nname = "keeper"\npin = true\n[[models.available]]\nname = "anchor"\npin = true\n',
    ),
  );
  await waitForHost(rig.gw, 'solo', (h) => h.router?.max_instances === 1 && h.loaded.includes('keeper'), 'solo discovered');
  await waitForHost(rig.gw, 'duo', (h) => h.router?.max_instances === 2 && h.loaded.length === 2, 'duo discovered');
});

after(async () => {
  await rig?.close();
});

async function status(node: string, model: string): Promise<string | undefined> {
  const list = (await httpJson('GET', `${rig.sim.url(node)}/models`)).json<{
    data: { id: string; status: { value: string } }[];
  }>();
  return list.data.find((m) => m.id === model)?.status.value;
}

function chat(model: string): Promise<{ status: number; text: string }> {
  return httpJson('POST', `${rig.gw.url}/v1/chat/completions`, {
    model,
    messages: [{ role: 'user', content: 'hi' }],
    max_tokens: 2,
  });
}

test('a request whose only router is full of pinned models is refused with `pinned`; the pinned model stays loaded', async () => {
  const answer = await chat('visitor');
  assert.equal(answer.status, 503, answer.text);
  assert.match(answer.text, /pinned/);
  assert.equal(await status('solo', 'keeper'), 'loaded', 'the pinned model was not switched out');
  assert.equal(await status('solo', 'visitor'), 'unloaded');
  const explained = await rig.gw.explain('model=visitor');
  const verdict = explained.nodes.find((n) => n.node === 'solo');
  assert.equal(verdict?.reason, 'pinned', JSON.stringify(explained));
  const metric = (await rig.gw.metrics()).split('\n').find((l) => l.includes('reason="pinned"'));
  assert.ok(metric !== undefined, 'the exclusion is counted by its reason');
});

test('on a full router with an idle unpinned model the gateway unloads that one first, never the pinned (least recently used) one', async () => {
  const answer = await chat('guest');
  assert.equal(answer.status, 200, answer.text);
  assert.equal(await status('duo', 'anchor'), 'loaded', 'the pinned model stays');
  assert.equal(await status('duo', 'idle'), 'unloaded', 'the idle unpinned model made room');
  assert.equal(await status('duo', 'guest'), 'loaded');
  const unloads = (await simRequests(rig.sim.url('duo'))).filter((r) => r.method === 'POST' && r.path === '/models/unload');
  assert.equal(unloads.length, 1, 'the gateway sent the unload itself, before the request loaded its model');
});
