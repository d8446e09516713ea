// Issue 24: on a llama-server router, `/v1/messages/count_tokens` loads its model like any inference
// request (PROTOCOLS.md §7.z), so the gateway admits it as one — a lease and, for a model that is
// not loaded, a load ticket; at `--models-max 1` the router then evicts the idle model. And the
// streamed `/v1/messages` of a model the router must load comes through.
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

test('count_tokens for an unloaded model is admitted as a load: the router loads it, evicting the idle one', async () => {
  const counted = await client.messages.countTokens({ model: 'model-b', messages: [{ role: 'user', content: 'one two three' }] });
  assert.ok(counted.input_tokens > 3);
  await waitForHost(
    rig.gw,
    'router',
    (h) => h.loaded.includes('model-b') && !h.loaded.includes('model-a'),
    'model-b loaded in model-a’s place',
  );
  const asked = (await simRequests(rig.sim.url('router'))).filter((r) => r.path === '/v1/messages/count_tokens');
  assert.deepEqual(
    asked.map((r) => r.model),
    ['model-b'],
    'asked once, for the model, never by a poll',
  );
  // The gateway knew it sent a switch (its router-room bookkeeping), as for a chat request.
  assert.match(await rig.gw.metrics(), /gateway_model_switches_total\{node="router"\} 1/);
});

test('a streamed message for the model the router must load again comes through', async () => {
  const stream = client.messages.stream({ model: 'model-a', max_tokens: 4, messages: [{ role: 'user', content: 'hi' }] });
  const final = await stream.finalMessage();
  assert.equal(final.stop_reason, 'max_tokens');
  assert.equal(final.usage.output_tokens, 4);
});
