// On a llama-server router, `/v1/messages/count_tokens` would load its model like any inference
// request (PROTOCOLS.md §7.z), and at `--models-max 1` evict the model in use. A count never loads
// a model (issue 41): for a model the router has not loaded the gateway counts itself, and the
// router is not asked; a loaded model's count goes to the router. And the streamed `/v1/messages`
// of a model the router must load comes through.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import { waitForHost } from '#test/fixtures/admin-readers.ts';
import { simRequests } from '#test/fixtures/http.ts';
import { startRouterRig, type RouterRig } from '#test/fixtures/router-fleet.ts';

let rig: RouterRig;
let client: Anthropic;

before(async () => {
  rig = await startRouterRig({
    routers: [
      {
        modelsMax: 1,
        loadTime: '50ms',
        more: ['ttft = "2ms"', 'tokens_per_second = 1000'],
        models: [
          ['model-a', 'loaded'],
          ['model-b', 'unloaded'],
        ],
      },
    ],
  });
  client = new Anthropic({ baseURL: rig.gw.url, apiKey: 'unused', maxRetries: 0, timeout: 20_000 });
});

after(async () => {
  await rig?.close();
});

test('count_tokens for an unloaded model is counted by the gateway: the router loads nothing, evicts nothing', async () => {
  const { data: counted, response } = await client.messages
    .countTokens({ model: 'model-b', messages: [{ role: 'user', content: 'one two three' }] })
    .withResponse();
  assert.ok(counted.input_tokens > 3);
  assert.equal(response.headers.get('x-switchyard-count'), 'bound', 'no node has model-b loaded: the gateway’s bound');
  const asked = (await simRequests(rig.sim.url('router'))).filter((r) => r.path === '/v1/messages/count_tokens');
  assert.deepEqual(asked, [], 'the router was not asked');
  await waitForHost(
    rig.gw,
    'router',
    (h) => h.loaded.includes('model-a') && !h.loaded.includes('model-b'),
    'model-a still loaded',
  );
  assert.doesNotMatch(await rig.gw.metrics(), /gateway_model_switches_total\{node="router"\} [1-9]/);
});

test('count_tokens for the loaded model goes to the router, once, and loads nothing else', async () => {
  const { data: counted, response } = await client.messages
    .countTokens({ model: 'model-a', messages: [{ role: 'user', content: 'one two three' }] })
    .withResponse();
  assert.ok(counted.input_tokens > 3);
  assert.equal(response.headers.get('x-switchyard-count'), null, 'counted by the node');
  const asked = (await simRequests(rig.sim.url('router'))).filter((r) => r.path === '/v1/messages/count_tokens');
  assert.deepEqual(
    asked.map((r) => r.model),
    ['model-a'],
    'asked once, for the model, never by a poll',
  );
  await waitForHost(
    rig.gw,
    'router',
    (h) => h.loaded.includes('model-a') && !h.loaded.includes('model-b'),
    'model-a still loaded',
  );
});

test('a streamed message for a model the router must load comes through', async () => {
  const stream = client.messages.stream({ model: 'model-b', max_tokens: 4, messages: [{ role: 'user', content: 'hi' }] });
  const final = await stream.finalMessage();
  assert.equal(final.stop_reason, 'max_tokens');
  assert.equal(final.usage.output_tokens, 4);
  await waitForHost(
    rig.gw,
    'router',
    (h) => h.loaded.includes('model-b') && !h.loaded.includes('model-a'),
    'model-b in model-a’s place',
  );
  assert.match(await rig.gw.metrics(), /gateway_model_switches_total\{node="router"\} 1/);
});
