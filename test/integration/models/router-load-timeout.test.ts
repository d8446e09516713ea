// Issue 17: routing.load_timeout bounds the wait for a load. A router whose load never completes
// (the sim's load_time of an hour) keeps the request without answer headers; the gateway cancels it,
// answers 503 with Retry-After and a clear message, and shows the model failing to load there.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRouterRig, type RouterRig } from '#test/fixtures/router-fleet.ts';
import { simRequests, simStats, type JsonResponse } from '#test/fixtures/http.ts';
import { chat as chatAt } from '#test/fixtures/gateway-state.ts';
import { untilEvent } from '#test/fixtures/events.ts';

const LOAD_TIMEOUT_MS = 1_500;

let rig: RouterRig;

before(async () => {
  rig = await startRouterRig({
    routers: [
      {
        modelsMax: 1,
        loadTime: '3600s',
        models: [
          ['model-a', 'loaded'],
          ['stuck', 'unloaded'],
        ],
      },
    ],
    gateway: `[routing]\nload_timeout = "${LOAD_TIMEOUT_MS}ms"`,
  });
});

after(async () => {
  await rig?.close();
});

const chat = (model: string): Promise<JsonResponse> => chatAt(rig.gw.url, model, { max_tokens: 4 });

test('a load that never completes is cancelled after load_timeout and answered 503 with Retry-After', async () => {
  const started = Date.now();
  const res = await chat('stuck');
  const tookMs = Date.now() - started;
  assert.equal(res.status, 503, res.text);
  assert.ok(res.headers['retry-after'] !== undefined, 'Retry-After is set');
  const error = res.json<{ error: { code: string; message: string } }>().error;
  assert.equal(error.code, 'model_load_timeout');
  assert.match(
    error.message,
    /model 'stuck' did not finish loading in time .*router: the model did not load within 1500ms \(routing\.load_timeout\)/,
  );
  assert.ok(tookMs >= LOAD_TIMEOUT_MS, `answered after ${tookMs}ms, not before the timeout`);
  await untilEvent(
    async () => (await simStats(rig.sim.url('router'))).inFlight === 0,
    [rig.sim.activity('router')],
    'the router saw the request cancelled',
  );
});

test('the model is shown failing to load on that node, and further requests are answered 503 at once', async () => {
  const explained = await rig.gw.explain('model=stuck');
  const verdict = explained.nodes.find((n) => n.node === 'router');
  assert.equal(verdict?.reason, 'load_failed', JSON.stringify(explained));
  assert.match(String(verdict?.detail), /did not load within 1500ms \(routing\.load_timeout\)/);
  assert.equal(explained.outcome, 'no_node_available');
  const sentBefore = (await simRequests(rig.sim.url('router'))).filter((r) => r.path === '/v1/chat/completions').length;
  assert.ok(sentBefore >= 1, 'the router recorded the first attempt');
  const res = await chat('stuck');
  assert.equal(res.status, 503, res.text);
  const sentAfter = (await simRequests(rig.sim.url('router'))).filter((r) => r.path === '/v1/chat/completions').length;
  assert.equal(sentAfter, sentBefore, 'not sent to the router again (counted at the router, not timed)');
  assert.match(res.text, /load_failed/);
});
