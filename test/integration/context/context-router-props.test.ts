// The cardinal rule of capacity polling over the real wire: on a llama-server router, `/props?model=X`
// loads X, so the gateway asks only for models the router lists as loaded, always with autoload=false,
// and its polls and requests never wake or load anything else. A recording router sim proves it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startGateway, startSimFleet, type GatewayUnderTest, type SimFleet } from '#test/fixtures/in-process-fleet.ts';
import { httpJson, simRequests } from '#test/fixtures/http.ts';
import { chatOfTokens, waitForHost } from '#test/fixtures/context.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { nodeChanges } from '#test/fixtures/gateway-waits.ts';

const FLEET = `
[[node]]
name = "router"
kind = "llamacpp-router"
ttft = "2ms"
tokens_per_second = 1000
load_time = "20ms"

[[node.model]]
id = "hot"
status = "loaded"
context = 4096
slots = 2

[[node.model]]
id = "cold"
status = "unloaded"
context = 8192

[[node.model]]
id = "dozing"
status = "sleeping"
context = 8192
`;

/** Discovery rounds to watch before judging (the gateway polls every 300 ms). */
const ROUNDS = 5;

let sim: SimFleet;
let gw: GatewayUnderTest;

before(async () => {
  sim = await startSimFleet(FLEET);
  const url = sim.url('router');
  // The same router twice: once declared llamacpp, once auto-detected; both poll /props.
  gw = await startGateway(
    gatewayToml([
      { name: 'router-llamacpp', url, kind: 'llamacpp' },
      { name: 'router-auto', url, kind: 'auto' },
    ]),
  );
  for (const name of ['router-llamacpp', 'router-auto']) {
    await waitForHost(gw, name, (h) => h.models?.hot?.n_ctx === 4096, 'per-model figures for hot');
  }
});

after(async () => {
  await gw?.close();
  await sim?.close();
});

async function routerStatuses(): Promise<Record<string, string>> {
  const list = (await httpJson('GET', `${sim.url('router')}/v1/models`)).json<{
    data: { id: string; status: { value: string } }[];
  }>();
  return Object.fromEntries(list.data.map((m) => [m.id, m.status.value]));
}

test('the gateway asks /props?model= only for the loaded model, always with autoload=false, and loads nothing', async () => {
  // Requests to the loaded model: short and long (the long one makes the gateway count tokens
  // exactly with the router's /tokenize), streaming and not.
  for (const body of [
    chatOfTokens('hot', 5, { max_tokens: 3 }),
    chatOfTokens('hot', 900, { max_tokens: 3 }),
    chatOfTokens('hot', 5, { max_tokens: 3, stream: true }),
  ]) {
    const res = await httpJson('POST', `${gw.url}/v1/chat/completions`, body);
    assert.equal(res.status, 200, res.text);
  }
  await untilEvent(
    // Each discovery round asks the plain /props once (router or single?), then per loaded model: wait for
    // both counts, since on a busy machine a round's per-model /props can trail its plain one by more than a round.
    async () => {
      const props = (await simRequests(sim.url('router'))).filter((r) => r.path === '/props');
      return (
        props.filter((r) => r.query.model === undefined).length >= 2 * ROUNDS &&
        props.filter((r) => r.query.model !== undefined).length >= 2 * ROUNDS - 2
      );
    },
    // Looked at on the gateway's node events (a round taken in), not as requests arrive at the
    // node: a round's per-model /props follow its plain one.
    [nodeChanges(gw)],
    `${ROUNDS} discovery rounds from each gateway node`,
  );

  const recorded = await simRequests(sim.url('router'));
  const propsPerModel = recorded.filter((r) => r.path === '/props' && r.query.model !== undefined);
  assert.ok(propsPerModel.length >= 2 * ROUNDS - 2, `per-model /props polled every round (saw ${propsPerModel.length})`);
  for (const r of propsPerModel) {
    assert.equal(r.query.model, 'hot', `only the loaded model is asked for: ${JSON.stringify(r)}`);
    assert.equal(r.query.autoload, 'false', `autoload=false on every per-model /props: ${JSON.stringify(r)}`);
  }
  const tokenize = recorded.filter((r) => r.path === '/tokenize');
  assert.ok(tokenize.length >= 1, 'the long prompt was counted with the router tokenizer');
  for (const r of tokenize) assert.equal(r.query.autoload, 'false', `autoload=false on /tokenize: ${JSON.stringify(r)}`);
  // No request of any kind (props, slots, metrics, tokenize, inference) named another model.
  const touchingOthers = recorded.filter((r) => r.model !== undefined && r.model !== 'hot');
  assert.deepEqual(touchingOthers, [], 'nothing named the unloaded or sleeping model');

  assert.deepEqual(await routerStatuses(), { hot: 'loaded', cold: 'unloaded', dozing: 'sleeping' });
});

test('/admin/hosts and /v1/models tell loaded models from ones available on demand', async () => {
  for (const name of ['router-llamacpp', 'router-auto']) {
    const host = await waitForHost(gw, name, (h) => h.role === 'router', 'router role');
    assert.deepEqual(host.loaded, ['hot']);
    assert.deepEqual(
      [...host.available_on_demand].sort((a, b) => a.id.localeCompare(b.id)),
      [
        { id: 'cold', status: 'unloaded' },
        { id: 'dozing', status: 'sleeping' },
      ],
    );
    assert.deepEqual(Object.keys(host.models ?? {}), ['hot'], 'figures only for the loaded model');
  }
  const models = (await httpJson('GET', `${gw.url}/v1/models`)).json<{
    data: { id: string; loaded: boolean; max_model_len: number | null; nodes: string[]; on_demand_nodes: string[] }[];
  }>();
  const byId = new Map(models.data.map((m) => [m.id, m]));
  assert.equal(byId.get('hot')?.loaded, true);
  assert.equal(byId.get('hot')?.max_model_len, 4096);
  assert.deepEqual([...(byId.get('hot')?.nodes ?? [])].sort(), ['router-auto', 'router-llamacpp']);
  for (const id of ['cold', 'dozing']) {
    assert.equal(byId.get(id)?.loaded, false, id);
    assert.deepEqual(byId.get(id)?.nodes, [], id);
    assert.deepEqual([...(byId.get(id)?.on_demand_nodes ?? [])].sort(), ['router-auto', 'router-llamacpp'], id);
  }
  assert.deepEqual(await routerStatuses(), { hot: 'loaded', cold: 'unloaded', dozing: 'sleeping' });
});
