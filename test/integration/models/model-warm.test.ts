// Issue 25: warm = 1 on a one-model router (--models-max 1). The reconciler loads the model after
// start; a request for another model switches it out; once that answer is in, the next rounds bring
// the warm model back (the on-demand model is idle and not wanted, so it is the one unloaded).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRouterRig, type RouterRig } from '#test/fixtures/router-fleet.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { nodeChanges } from '#test/fixtures/gateway-waits.ts';

let rig: RouterRig;

before(async () => {
  rig = await startRouterRig({
    routers: [
      {
        modelsMax: 1,
        more: ['ttft = "10ms"', 'tokens_per_second = 1000'],
        models: [
          ['embed', 'unloaded'],
          ['chat', 'unloaded'],
        ],
      },
    ],
    gateway: '[routing]\nswap_after = "0s"\n[[models.available]]\nname = "embed"\nwarm = 1\n',
    learned: false,
  });
});

after(async () => {
  await rig?.close();
});

// The race this once showed (a decision on a listing from before the switch) is gone: the manager
// asks a fresh listing before an admin decision and after every operation.
test('warm = 1 comes up after start and again after a switch evicted it', async () => {
  await untilEvent(async () => (await rig.routerStatus('embed')) === 'loaded', [nodeChanges(rig.gw)], 'embed warm after start');
  const answer = await httpJson('POST', `${rig.gw.url}/v1/chat/completions`, {
    model: 'chat',
    messages: [{ role: 'user', content: 'hi' }],
    max_tokens: 2,
  });
  assert.equal(answer.status, 200, answer.text);
  await untilEvent(
    async () => (await rig.routerStatus('embed')) === 'loaded' && (await rig.routerStatus('chat')) === 'unloaded',
    [nodeChanges(rig.gw)],
    'embed warm again after the switch',
  );
});
