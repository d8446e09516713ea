// Issue 17: a llama-server router started with --models-max 1 (the sim reproduces build b10587: a
// request whose model cannot load is queued in the router and never woken when the loaded model goes
// idle). Straight to the router such a burst hangs; through the gateway every request is answered,
// the router never runs more than max_instances models, and it switches once per wave.
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
    gateway: '[routing]\nqueue_timeout = "30s"\nswap_after = "5s"',
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

test('straight to the sim router the same burst leaves the other model queued in the router while the loaded one is idle', async () => {
  const url = rig.sim.url('router');
  const loaded = (await httpJson('GET', `${url}/v1/models`)).json<{ data: { id: string; status: { value: string } }[] }>();
  const running = loaded.data.find((m) => m.status.value === 'loaded')?.id ?? 'model-a';
  const other = running === 'model-a' ? 'model-b' : 'model-a';
  const controller = new AbortController();
  const send = (model: string): Promise<unknown> =>
    fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 }),
      signal: controller.signal,
    }).then(
      (r) => r.text(),
      () => undefined,
    );
  const loadedAnswers = [send(running), send(running), send(running)];
  await untilEvent(async () => (await residency()).running === 1, [rig.sim.activity('router')], 'the loaded model busy');
  const hanging = [send(other), send(other), send(other)];
  await Promise.all(loadedAnswers);
  await untilEvent(
    async () => (await residency()).queued.includes(other),
    [rig.sim.activity('router')],
    `${other} queued in the router`,
  );
  const statuses = (await httpJson('GET', `${url}/v1/models`)).json<{ data: { id: string; status: { value: string } }[] }>();
  assert.equal(
    statuses.data.find((m) => m.id === running)?.status.value,
    'loaded',
    'the loaded model idles, the queue is not woken',
  );
  controller.abort();
  await Promise.all(hanging);
  await untilEvent(
    async () => (await residency()).queued.length === 0,
    [rig.sim.activity('router')],
    'the router queue emptied by the clients leaving',
  );
});
