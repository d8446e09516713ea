// Issue 25, item 3: `[[models.available]] warm = 1` keeps one node with the model loaded. Before, the
// key was refused (and nothing loaded a model but a request): now the reconciler loads it on a node
// that lists it within one round after start, on the simulated router and the simulated Ollama.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRouterRig, type RouterRig } from '#test/fixtures/router-fleet.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { nodeChanges } from '#test/fixtures/gateway-waits.ts';

const OLLAMA = `
[[node]]
name = "ollama"
kind = "ollama"
load_time = "30ms"

[[node.model]]
id = "qwen:7b"
status = "unloaded"
`;

let rig: RouterRig;

before(async () => {
  rig = await startRouterRig({
    routers: [
      {
        models: [
          ['embed', 'unloaded'],
          ['chat', 'unloaded'],
        ],
      },
    ],
    others: { fleet: OLLAMA, nodes: [{ name: 'ollama', kind: 'ollama' }] },
    gateway: '[[models.available]]\nname = "embed"\nwarm = 1\n\n[[models.available]]\nname = "qwen:7b"\nwarm = 1\n',
    learned: false,
  });
});

after(async () => {
  await rig?.close();
});

test('warm = 1 loads the model on a node that lists it, without any request', async () => {
  await untilEvent(
    async () => {
      const list = (await httpJson('GET', `${rig.sim.url('router')}/models`)).json<{
        data: { id: string; status: { value: string } }[];
      }>();
      return list.data.find((m) => m.id === 'embed')?.status.value === 'loaded';
    },
    [nodeChanges(rig.gw)],
    'embed loaded on the router',
  );
  await untilEvent(
    async () => {
      const ps = (await httpJson('GET', `${rig.sim.url('ollama')}/api/ps`)).json<{ models: { model: string }[] }>();
      return ps.models.some((m) => m.model === 'qwen:7b');
    },
    [nodeChanges(rig.gw)],
    'qwen loaded on Ollama',
  );
  const list = (await httpJson('GET', `${rig.sim.url('router')}/models`)).json<{
    data: { id: string; status: { value: string } }[];
  }>();
  assert.equal(list.data.find((m) => m.id === 'chat')?.status.value, 'unloaded', 'a model without desired state stays unloaded');
  const view = (await httpJson('GET', `${rig.gw.url}/admin/models`)).json<{
    models: { model: string; loaded_on: string[]; desired: { warm: number } | null }[];
  }>();
  assert.equal(view.models.find((m) => m.model === 'embed')?.desired?.warm, 1);
});
