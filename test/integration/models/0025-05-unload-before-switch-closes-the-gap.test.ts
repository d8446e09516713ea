// Issue 25, item 5 (unload before a switch): a llama-server router's own count of a model's requests
// drops a moment after the answer ended (the sim's `request_end_lag`), while the gateway's has
// dropped already. A switch request landing in that gap found no idle victim in the router, was
// queued inside it (build b10587 never wakes that queue) and waited for routing.load_timeout. Now the
// gateway unloads the idle victim itself, confirmed, before the request loads its model: the router
// has room, nothing waits for load_timeout, and no unload ever cuts an answer off.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRouterRig, type RouterRig } from '#test/fixtures/router-fleet.ts';
import { httpJson, simRequests } from '#test/fixtures/http.ts';

const LOAD_TIMEOUT_MS = 6_000;

interface Residency {
  readonly peakRunning: number;
  readonly queued: readonly string[];
  readonly unloadsMidRequest: number;
}

let rig: RouterRig;

before(async () => {
  rig = await startRouterRig({
    routers: [
      {
        modelsMax: 1,
        loadTime: '40ms',
        more: ['request_end_lag = "400ms"', 'ttft = "20ms"', 'tokens_per_second = 1000'],
        models: [
          ['model-a', 'loaded'],
          ['model-b', 'unloaded'],
        ],
      },
    ],
    // The gateway's own switches (router_queue = "gateway"): where the router queues itself the gateway
    // unloads nothing first and the router hands the slot over when its count drops (router-queue tests).
    gateway: `[routing]\nqueue_timeout = "30s"\nswap_after = "2s"\nload_timeout = "${LOAD_TIMEOUT_MS / 1000}s"\nrouter_queue = "gateway"\n`,
  });
});

after(async () => {
  await rig?.close();
});

const residency = (): Promise<Residency> => rig.routerResidency<Residency>();

async function chat(model: string): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  const answer = await httpJson('POST', `${rig.gw.url}/v1/chat/completions`, {
    model,
    messages: [{ role: 'user', content: 'hi' }],
    max_tokens: 2,
  });
  return { status: answer.status, ms: performance.now() - started };
}

/** A small seeded generator: the same arrivals every run. */
function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
}

test('a switch request sent right after the previous answer ended does not wait for load_timeout', async () => {
  const first = await chat('model-a');
  assert.equal(first.status, 200);
  // In the router's gap: its count of model-a still says busy for request_end_lag.
  const switched = await chat('model-b');
  assert.equal(switched.status, 200, 'answered, not cancelled at load_timeout');
  assert.ok(
    switched.ms < LOAD_TIMEOUT_MS / 2,
    `the switch took ${Math.round(switched.ms)}ms (load_timeout ${LOAD_TIMEOUT_MS}ms)`,
  );
  const unloads = (await simRequests(rig.sim.url('router'))).filter((r) => r.method === 'POST' && r.path === '/models/unload');
  assert.equal(unloads.length, 1, 'the gateway unloaded the idle model itself first');
  const stats = await residency();
  assert.deepEqual(stats.queued, [], 'nothing was queued inside the router');
  assert.equal(stats.unloadsMidRequest, 0);
});

test('three waves of random arrivals for two models: every request answered, one model at a time, no unload mid-request', async () => {
  const random = seeded(25);
  for (let wave = 0; wave < 3; wave += 1) {
    const asks = Array.from({ length: 8 }, (_, i) => (i % 2 === wave % 2 ? 'model-a' : 'model-b'));
    const answers = await Promise.all(
      asks.map(async (model) => {
        await new Promise((resolve) => setTimeout(resolve, Math.floor(random() * 60)));
        return chat(model);
      }),
    );
    assert.deepEqual(
      answers.map((a) => a.status),
      asks.map(() => 200),
      `wave ${wave}`,
    );
    for (const a of answers) assert.ok(a.ms < LOAD_TIMEOUT_MS, `a request waited ${Math.round(a.ms)}ms`);
  }
  const stats = await residency();
  assert.equal(stats.unloadsMidRequest, 0, 'no unload cut an answer off');
  assert.equal(stats.peakRunning, 1, 'never more than max_instances models');
  assert.deepEqual(stats.queued, []);
});
