// Issue 25: warm = 1 on a one-model router (--models-max 1). The reconciler loads the model after
// start; a request for another model switches it out; once that answer is in, the next rounds bring
// the warm model back (the on-demand model is idle and not wanted, so it is the one unloaded).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startFleetAndGateway, type FleetAndGateway } from '#test/fixtures/in-process-fleet.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { nodeChanges } from '#test/fixtures/gateway-waits.ts';

const FLEET = `
[[node]]
name = "router"
kind = "llamacpp-router"
models_max = 1
load_time = "30ms"
ttft = "10ms"
tokens_per_second = 1000

[[node.model]]
id = "embed"
status = "unloaded"

[[node.model]]
id = "chat"
status = "unloaded"
`;

let rig: FleetAndGateway;

before(async () => {
  rig = await startFleetAndGateway(FLEET, (sim) =>
    gatewayToml(
      [{ name: 'router', url: sim.url('router'), kind: 'llamacpp' }],
      '[routing]\nswap_after = "0s"\n[[models.available]]\nname = "embed"\nwarm = 1\n',
    ),
  );
});

after(async () => {
  await rig?.close();
});

async function status(model: string): Promise<string | undefined> {
  const list = (await httpJson('GET', `${rig.sim.url('router')}/models`)).json<{
    data: { id: string; status: { value: string } }[];
  }>();
  return list.data.find((m) => m.id === model)?.status.value;
}

// The race this once showed (a decision on a listing from before the switch) is gone: the manager
// asks a fresh listing before an admin decision and after every operation.
test('warm = 1 comes up after start and again after a switch evicted it', async () => {
  await untilEvent(async () => (await status('embed')) === 'loaded', [nodeChanges(rig.gw)], 'embed warm after start');
  const answer = await httpJson('POST', `${rig.gw.url}/v1/chat/completions`, {
    model: 'chat',
    messages: [{ role: 'user', content: 'hi' }],
    max_tokens: 2,
  });
  assert.equal(answer.status, 200, answer.text);
  await untilEvent(
    async () => (await status('embed')) === 'loaded' && (await status('chat')) === 'unloaded',
    [nodeChanges(rig.gw)],
    'embed warm again after the switch',
  );
});
