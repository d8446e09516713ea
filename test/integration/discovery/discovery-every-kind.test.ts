// End to end (issue 3): one gateway in front of a simulated node of every kind — vLLM, llama.cpp,
// the llama.cpp router, Ollama and SGLang. Each node's model list is discovered in its own dialect
// and each model is routed to the node that has it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, startSimFleet, type GatewayUnderTest, type SimFleet } from '#test/fixtures/in-process-fleet.ts';
import { httpJson, setSimFaults, simRequests } from '#test/fixtures/http.ts';
import {
  chat,
  discoveries,
  discoveryLogCounts,
  gatewayConfig,
  healthOf,
  logMark,
  modelState,
  servedBy,
  waitForNode,
} from '#test/fixtures/gateway-state.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { listings } from '#test/fixtures/gateway-waits.ts';

const FLEET = `
[[node]]
name = "vllm-a"
kind = "vllm"
models = ["llama-3.1-8b-instruct", "llama-3.1-8b-lora"]
ttft = "2ms"
tokens_per_second = 1000

[[node]]
name = "llamacpp-a"
kind = "llamacpp"
models = ["qwen3-8b"]
ttft = "2ms"
tokens_per_second = 1000

[[node]]
name = "router-a"
kind = "llamacpp-router"
ttft = "2ms"
tokens_per_second = 1000
load_time = "20ms"
models_max = 2

[[node.model]]
id = "gemma-3-4b"
aliases = ["gemma"]
status = "loaded"

[[node.model]]
id = "phi-4-mini"
status = "unloaded"

[[node]]
name = "ollama-a"
kind = "ollama"
models = ["llama3.2", "nomic-embed-text"]
ttft = "2ms"
tokens_per_second = 1000
load_time = "20ms"

[[node]]
name = "sglang-a"
kind = "sglang"
models = ["qwen2.5-7b-instruct"]
ttft = "2ms"
tokens_per_second = 1000
api_key = "sk-sim"
`;

/** The gateway's `kind` for each sim kind (the router is a llama.cpp server). */
const GATEWAY_KIND: Readonly<Record<string, string>> = {
  vllm: 'vllm',
  llamacpp: 'llamacpp',
  'llamacpp-router': 'llamacpp',
  ollama: 'ollama',
  sglang: 'sglang',
};

let sim: SimFleet;
let gw: GatewayUnderTest;

before(async () => {
  sim = await startSimFleet(FLEET);
  assert.deepEqual(sim.nodes.map((n) => n.kind).sort(), ['llamacpp', 'llamacpp-router', 'ollama', 'sglang', 'vllm']);
  const config = gatewayConfig({
    health: { interval: '150ms', timeout: '2s', failThreshold: 3 },
    discovery: { interval: '150ms', timeout: '3s' },
    nodes: sim.nodes.map((n) => ({
      name: n.name,
      url: n.url,
      kind: GATEWAY_KIND[n.kind] ?? 'auto',
      apiKey: n.kind === 'sglang' ? 'sk-sim' : undefined,
    })),
    extra: ['[[models.available]]', 'name = "gemma-3-4b"', 'aliases = ["gemma-alias"]'].join('\n'),
  });
  gw = await startGateway(config);
  for (const n of sim.nodes) {
    await waitForNode(gw, n.name, (d) => d.models.state === 'known' && d.status === 'healthy', 'known and healthy');
  }
});

after(async () => {
  await gw?.close();
  await sim?.close();
});

test("every kind's model list is discovered with exactly the ids the node serves", async () => {
  const report = await healthOf(gw.url);
  assert.equal(report.status, 'ok');
  assert.equal(report.nodes, 5);
  assert.equal(report.healthy, 5);
  assert.equal(report.models_ok, 5);
  assert.deepEqual(Object.keys(report).slice(0, 5), ['status', 'nodes', 'healthy', 'models_ok', 'details']);
  for (const detail of report.details) {
    assert.deepEqual(Object.keys(detail).slice(0, 3), ['name', 'url', 'kind']);
    assert.ok('status' in detail);
    assert.deepEqual(Object.keys(detail.models), ['state', 'names', 'age_seconds', 'fails', 'last_error']);
  }
  for (const n of sim.nodes) {
    const detail = report.details.find((d) => d.name === n.name);
    assert.deepEqual([...(detail?.models.names ?? [])].sort(), [...n.modelIds()].sort(), n.name);
    assert.equal(detail?.url, n.url);
    assert.equal(detail?.models.fails, 0);
    assert.equal(detail?.models.last_error, null);
    assert.ok((detail?.models.age_seconds ?? -1) >= 0);
  }
});

test('each model is routed to the node that lists it, with the id it listed', async () => {
  for (const n of sim.nodes) {
    for (const id of n.modelIds()) {
      const res = await chat(gw.url, id);
      assert.equal(res.status, 200, `${id}: ${res.text}`);
      assert.equal(servedBy(res), n.name, id);
      const seen = (await simRequests(n.url)).filter((r) => r.path === '/v1/chat/completions').at(-1);
      assert.equal(seen?.model, id, `${n.name} received the model id it listed`);
    }
  }
});

test('a declared alias routes as the named model and is forwarded with the served id', async () => {
  const res = await chat(gw.url, 'gemma-alias');
  assert.equal(res.status, 200, res.text);
  assert.equal(servedBy(res), 'router-a');
  const seen = (await simRequests(sim.url('router-a'))).filter((r) => r.path === '/v1/chat/completions').at(-1);
  assert.equal(seen?.model, 'gemma-3-4b');
  // The router's own alias routes too, as the router resolves it (issue 21 item 2): it gets its id.
  const own = await chat(gw.url, 'gemma');
  assert.equal(own.status, 200, own.text);
  assert.equal(servedBy(own), 'router-a');
  assert.equal(
    (await simRequests(sim.url('router-a'))).filter((r) => r.path === '/v1/chat/completions').at(-1)?.model,
    'gemma-3-4b',
  );
  // Every listing is current and no node takes the name: 404, naming the nearest names nodes take.
  const unknown = await chat(gw.url, 'gemma-3-4');
  assert.equal(unknown.status, 404, unknown.text);
  assert.equal(unknown.json<{ error: { code: string; closest_models: string[] } }>().error.closest_models[0], 'gemma-3-4b');
});

test('an Ollama node with no models (data: null) is an empty list: known_empty after two, never a parse error', async () => {
  const mark = logMark(gw);
  const parseErrors = await discoveries(gw.url, 'ollama-a', 'parse_error');
  const empties = await discoveries(gw.url, 'ollama-a', 'empty');
  await setSimFaults(sim.url('ollama-a'), { models: 'empty' });
  try {
    const detail = await waitForNode(gw, 'ollama-a', modelState('known_empty'), 'known_empty');
    assert.deepEqual(detail.models.names, []);
    assert.equal(detail.models.fails, 0);
    assert.ok((await discoveries(gw.url, 'ollama-a', 'empty')) - empties >= 2);
    assert.equal(await discoveries(gw.url, 'ollama-a', 'parse_error'), parseErrors);
    // An empty listing is a current one: with every other node's listing current too, no node
    // serves the model now, and the answer is 404 (clients do not retry it).
    const res = await chat(gw.url, 'llama3.2:latest');
    assert.equal(res.status, 404, res.text);
    assert.equal(res.json<{ error: { code: string } }>().error.code, 'model_not_found');
  } finally {
    await setSimFaults(sim.url('ollama-a'), { models: 'none' });
  }
  await waitForNode(gw, 'ollama-a', modelState('known'), 'known again');
  assert.equal(servedBy(await chat(gw.url, 'llama3.2:latest')), 'ollama-a');
  assert.deepEqual(discoveryLogCounts(gw, 'ollama-a', mark), {
    'node reports no models': 1,
    'models discovered': 1,
    // gemma-3-4b is declared without a group, and this node's list changed: warned again.
    'configured model not served by node': 1,
  });
});

test('an empty list in any other dialect is empty too, and a body without data is a parse error in every dialect', async () => {
  for (const n of sim.nodes) {
    for (const [fault, result, state] of [
      ['empty', 'empty', 'known_empty'],
      ['no_data', 'parse_error', 'degraded'],
    ] as const) {
      const before_ = await discoveries(gw.url, n.name, result);
      await setSimFaults(n.url, { models: fault });
      try {
        await untilEvent(
          async () => (await discoveries(gw.url, n.name, result)) > before_,
          [listings(gw)],
          `${n.name} ${fault} → ${result}`,
        );
        await waitForNode(gw, n.name, modelState(state), `${fault} → ${state}`);
      } finally {
        await setSimFaults(n.url, { models: 'none' });
      }
      await waitForNode(gw, n.name, modelState('known'), 'known again');
    }
  }
});

test('the fleet /v1/models lists every discovered model with the node serving it', async () => {
  const res = await httpJson('GET', `${gw.url}/v1/models`);
  assert.equal(res.status, 200);
  const body = res.json<{ data: { id: string; nodes?: string[] }[] }>();
  for (const n of sim.nodes) {
    for (const id of n.modelIds()) {
      const entry = body.data.find((m) => m.id === id);
      assert.ok(entry, `${id} listed`);
      assert.ok(entry.nodes === undefined || entry.nodes.includes(n.name), `${id} on ${n.name}`);
    }
  }
});
