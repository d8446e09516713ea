// Issue 40 item 4: the first-token deadline must not abandon a node that is loading the request's
// model. A llama-server router loading a model on demand answers nothing — not even its head —
// until the model is up, which may take longer than the deadline; abandoning it there would throw
// the load away and fail the request over (or answer 502 where no other node serves the model).
// What must hold: a request the scheduler admits with a load ticket (the model is unloaded,
// loading, asleep or being switched to) waits for its head as routing.load_timeout allows, and its
// first-token deadline runs from that head. Both the router (its load, its tokens) and the gateway
// (its deadlines) run on manual clocks the test moves: the gateway's passes six times the
// deadline while the router is still loading.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { ManualClock } from '#src/core/clock.ts';
import type { ProxyEvents } from '#src/proxy/index.ts';
import { startGateway, startSimFleet, type GatewayUnderTest, type SimFleet } from '#test/fixtures/in-process-fleet.ts';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { routerFleet, routerStatus } from '#test/fixtures/router-fleet.ts';
import { eventually, httpJson } from '#test/fixtures/http.ts';
import { advanceUntil } from '#test/fixtures/test-clocks.ts';

const DEADLINE_MS = 10_000;
const simClock = new ManualClock();
const gatewayClock = new ManualClock();
let sim: SimFleet;
let gw: GatewayUnderTest;
const attempts: ProxyEvents['proxy:attempt'][] = [];

before(async () => {
  sim = await startSimFleet(
    routerFleet(
      [
        ['model-a', 'loaded'],
        ['model-b', 'unloaded'],
      ],
      { loadTime: '60s', more: ['ttft = "0ms"', 'tokens_per_second = 100'] },
    ),
    { clock: simClock },
  );
  gw = await startGateway(
    gatewayToml([{ name: 'router', url: sim.url('router'), kind: 'llamacpp' }], `[upstream]\nfirst_token_timeout = "10s"\n`),
    { clock: gatewayClock, logLevel: 'info' },
  );
  // The gateway learns the router (its models, model-b unloaded) as its own clock moves.
  await advanceUntil(
    gatewayClock,
    async () => {
      const hosts = (await httpJson('GET', `${gw.url}/admin/hosts`)).json<{ hosts: { name: string; loaded: string[] }[] }>();
      return hosts.hosts.find((h) => h.name === 'router')?.loaded.includes('model-a') === true;
    },
    'the router learned',
    { stepMs: 300 },
  );
  gw.gateway.requestEvents.on('proxy:attempt', (event) => attempts.push(event));
});

after(async () => {
  await gw?.close();
  await sim?.close();
});

test('a stream whose model is loading is not abandoned at the first-token deadline; it is answered once loaded', async () => {
  let done = false;
  const answered = request(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'model-b', messages: [{ role: 'user', content: 'hi' }], stream: true, max_tokens: 5 }),
    signal: AbortSignal.timeout(60_000),
  }).then(async (res) => ({ res, text: await res.body.text() }));
  void answered.finally(() => (done = true)).catch(() => {});
  await eventually(
    async () => (await routerStatus(sim.url('router'), 'model-b')) === 'loading',
    20_000,
    'the router loading model-b',
  );
  // Six deadlines pass on the gateway's clock while the router loads (load_timeout, 120 s, does not).
  gatewayClock.advance(6 * DEADLINE_MS);
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.equal(done, false, 'still waiting for the load');
  assert.equal(attempts.length, 0, `no attempt ended: ${JSON.stringify(attempts)}`);
  assert.equal(await routerStatus(sim.url('router'), 'model-b'), 'loading', 'the load goes on');
  // The load completes and the router streams its answer.
  await advanceUntil(simClock, () => done, 'the answer after the load', { stepMs: 1_000 });
  const { res, text } = await answered;
  assert.equal(res.statusCode, 200, text);
  assert.equal(res.headers['x-switchyard-node'], 'router');
  assert.match(text, /data: \[DONE\]/, 'the whole stream');
  assert.deepEqual(
    attempts.map((a) => [a.node, a.result]),
    [['router', 'success']],
  );
});
