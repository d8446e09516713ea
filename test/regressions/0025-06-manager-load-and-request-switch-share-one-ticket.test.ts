// Issue 25, item 6 (one book): the model manager's loads (admin and reconciler) and the scheduler's
// request switches kept separate books, so a request for a third model could be sent to a
// --models-max 1 router while the manager was loading another one there: the router, full with the
// loading model, queued the request itself until routing.load_timeout. Now both take the same
// one-switch-at-a-time ticket per router: the request waits in the gateway for the manager's load,
// then switches, and is answered well before load_timeout.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startFleetAndGateway, type FleetAndGateway } from '#test/fixtures/in-process-fleet.ts';
import { waitForHost } from '#test/fixtures/admin-readers.ts';
import { eventually, httpJson } from '#test/fixtures/http.ts';

const FLEET = `
[[node]]
name = "router"
kind = "llamacpp-router"
models_max = 1
load_time = "800ms"
ttft = "10ms"
tokens_per_second = 1000

[[node.model]]
id = "model-a"
status = "loaded"

[[node.model]]
id = "model-b"
status = "unloaded"

[[node.model]]
id = "model-c"
status = "unloaded"
`;

const LOAD_TIMEOUT_MS = 8_000;

let rig: FleetAndGateway;

before(async () => {
  rig = await startFleetAndGateway(FLEET, (sim) =>
    gatewayToml(
      [{ name: 'router', url: sim.url('router'), kind: 'llamacpp' }],
      `[routing]\nqueue_timeout = "30s"\nload_timeout = "${LOAD_TIMEOUT_MS / 1000}s"\n`,
    ),
  );
  await waitForHost(
    rig.gw,
    'router',
    (h) => h.router?.max_instances === 1 && h.loaded.includes('model-a'),
    'max_instances learned',
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

test('a request for another model waits for the admin load under way on the router, then switches; nothing is queued inside the router', async () => {
  const load = httpJson('POST', `${rig.gw.url}/admin/models/load`, { model: 'model-c', node: 'router' });
  await eventually(async () => (await routerStatus('model-c')) === 'loading', 5_000, 'the admin load under way');
  const started = performance.now();
  const answer = await httpJson('POST', `${rig.gw.url}/v1/chat/completions`, {
    model: 'model-b',
    messages: [{ role: 'user', content: 'hi' }],
    max_tokens: 2,
  });
  const ms = performance.now() - started;
  const loaded = await load;
  assert.equal(loaded.status, 200, loaded.text);
  assert.equal(answer.status, 200, answer.text);
  assert.ok(ms < LOAD_TIMEOUT_MS / 2, `the request took ${Math.round(ms)}ms (load_timeout ${LOAD_TIMEOUT_MS}ms)`);
  const stats = (await httpJson('GET', `${rig.sim.url('router')}/__sim/stats`)).json<{
    residency: { peakRunning: number; queued: string[]; unloadsMidRequest: number };
  }>().residency;
  assert.deepEqual(stats.queued, [], 'the router queued nothing itself');
  assert.equal(stats.peakRunning, 1);
  assert.equal(stats.unloadsMidRequest, 0);
});
