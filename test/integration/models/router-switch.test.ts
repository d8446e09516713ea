// Issue 17: a llama-server router started with --models-max 1. Through the gateway holding the
// switches itself (router_queue = "gateway") every request is answered, the router never runs more
// than max_instances models, and it switches once per wave. Straight to the router the same burst is
// queued and handed over by the router's own queue (issue 41: docs/protocols.md §7.z5; the hang the
// first version of this test showed came from a sim that never woke that queue, which the source
// does when the loaded model's last request ends).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRouterRig, type RouterRig } from '#test/fixtures/router-fleet.ts';
import { httpJson, simRequests, type JsonResponse } from '#test/fixtures/http.ts';
import { chat as chatAt } from '#test/fixtures/gateway-state.ts';
import { untilEvent } from '#test/fixtures/events.ts';

interface Residency {
  readonly running: number;
  readonly peakRunning: number;
  readonly loads: number;
  readonly queued: readonly string[];
}

let rig: RouterRig;

before(async () => {
  rig = await startRouterRig({
    routers: [
      {
        modelsMax: 1,
        loadTime: '40ms',
        more: ['ttft = "1s"', 'tokens_per_second = 1000'],
        models: [
          ['model-a', 'loaded', 'context = 4096', 'slots = 4'],
          ['model-b', 'unloaded', 'context = 4096', 'slots = 4'],
        ],
      },
    ],
    gateway: '[routing]\nqueue_timeout = "30s"\nswap_after = "5s"\nrouter_queue = "gateway"',
  });
});

after(async () => {
  await rig?.close();
});

const residency = (): Promise<Residency> => rig.routerResidency<Residency>();

const chat = (model: string): Promise<JsonResponse> => chatAt(rig.gw.url, model, { max_tokens: 4 });

async function switchesCounted(): Promise<number> {
  const line = (await rig.gw.metrics()).split('\n').find((l) => l.startsWith('gateway_model_switches_total{node="router"}'));
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
}

/**
 * Six concurrent requests alternating between the two models, the loaded model's first: that one is
 * let reach the router first and answers slowly (ttft 1 s), so the order the others arrive in cannot
 * change the minimum (one switch) even on a loaded machine.
 */
async function wave(loaded: string, other: string): Promise<number[]> {
  const before = (await simRequests(rig.sim.url('router'))).filter((r) => r.path === '/v1/chat/completions').length;
  const first = chat(loaded);
  await untilEvent(
    async () => (await simRequests(rig.sim.url('router'))).filter((r) => r.path === '/v1/chat/completions').length > before,
    [rig.sim.activity('router')],
    'the first request at the router',
  );
  const rest = [other, loaded, other, loaded, other].map((model) => chat(model));
  const answers = await Promise.all([first, ...rest]);
  return answers.map((a) => a.status);
}

test('a hosts entry shows the router limits learned from its plain /props', async () => {
  const host = (await rig.gw.hosts()).hosts.find((h) => h.name === 'router');
  assert.deepEqual(host?.router, { max_instances: 1, models_autoload: true });
});

test('three waves of six requests for two models on a max_instances=1 router all get 200, one switch per wave', async () => {
  const loadsBefore = (await residency()).loads;
  assert.deepEqual(await wave('model-a', 'model-b'), [200, 200, 200, 200, 200, 200]);
  assert.deepEqual(await wave('model-b', 'model-a'), [200, 200, 200, 200, 200, 200]);
  assert.deepEqual(await wave('model-a', 'model-b'), [200, 200, 200, 200, 200, 200]);
  // The router drops a request from its queue a moment after it answered it: wait for that, bounded.
  await untilEvent(
    async () => (await residency()).queued.length === 0,
    [rig.sim.activity('router')],
    'nothing left queued inside the router',
  );
  const after = await residency();
  assert.equal(after.peakRunning, 1, 'never more than max_instances models running');
  assert.equal(after.loads - loadsBefore, 3, 'one load per wave');
  assert.equal(await switchesCounted(), 3, 'gateway_model_switches_total counts the minimum');
  const waits = (await rig.gw.metrics())
    .split('\n')
    .find((l) => l.startsWith('gateway_queue_wait_seconds_count{model="model-b",outcome="admitted"}'));
  assert.ok(waits !== undefined && Number(waits.split(' ').at(-1)) > 0, 'the held requests show in the queue-wait metric');
});

test('straight to the sim router the same burst waits in the router while the loaded model is busy, then is handed over in one load', async () => {
  const url = rig.sim.url('router');
  const loaded = (await httpJson('GET', `${url}/v1/models`)).json<{ data: { id: string; status: { value: string } }[] }>();
  const running = loaded.data.find((m) => m.status.value === 'loaded')?.id ?? 'model-a';
  const other = running === 'model-a' ? 'model-b' : 'model-a';
  const loadsBefore = (await residency()).loads;
  const send = (model: string): Promise<number> =>
    fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 }),
    }).then(async (r) => {
      await r.text();
      return r.status;
    });
  const loadedAnswers = [send(running), send(running), send(running)];
  await untilEvent(async () => (await residency()).running === 1, [rig.sim.activity('router')], 'the loaded model busy');
  const queued = [send(other), send(other), send(other)];
  await untilEvent(
    async () => (await residency()).queued.includes(other),
    [rig.sim.activity('router')],
    `${other} queued in the router (its entry merges the three)`,
  );
  assert.deepEqual(await Promise.all([...loadedAnswers, ...queued]), [200, 200, 200, 200, 200, 200]);
  const after = await residency();
  assert.equal(after.loads - loadsBefore, 1, 'one load for the three queued requests');
  assert.equal(after.peakRunning, 1);
  assert.deepEqual(after.queued, []);
});
