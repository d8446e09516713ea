// Issue 21, item 2: a request's model matched node listings only exactly. `llama3.2` got 404 while
// an Ollama node served `llama3.2:latest` (Ollama reads a name without a tag as `:latest`); a
// llama-server router's own aliases got 404; and the "closest" list ranked an unrelated model
// first. Now each node's kind resolves the name as that server does, the node is sent the id it
// listed, and the 404 and its suggestions read the same resolution.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startFleetAndGateway, type FleetAndGateway } from '#test/fixtures/in-process-fleet.ts';
import { waitForHost } from '#test/fixtures/context.ts';
import { httpJson } from '#test/fixtures/http.ts';

const FLEET = `
[[node]]
name = "ollama"
kind = "ollama"
models = ["llama3.2:latest", "llava:7b"]
ttft = "1ms"
load_time = "1ms"

[[node]]
name = "router"
kind = "llamacpp-router"
ttft = "1ms"
load_time = "1ms"
[[node.model]]
id = "tiny-llama-a"
aliases = ["gpt-4o-mini", "tiny-a"]
status = "loaded"

[[node]]
name = "vllm"
kind = "vllm"
ttft = "1ms"
[[node.model]]
id = "meta-llama/Llama-3.1-8B-Instruct"
aliases = ["llama-3.1-8b"]
`;

let fleet: FleetAndGateway;
let client: OpenAI;

before(async () => {
  fleet = await startFleetAndGateway(FLEET, (sim) =>
    gatewayToml([
      { name: 'ollama', url: sim.url('ollama'), kind: 'ollama' },
      { name: 'router', url: sim.url('router'), kind: 'llamacpp' },
      { name: 'vllm', url: sim.url('vllm'), kind: 'vllm' },
    ]),
  );
  for (const name of ['ollama', 'router', 'vllm'])
    await waitForHost(fleet.gw, name, (h) => h.discovery.state === 'known', 'listed');
  client = new OpenAI({ baseURL: `${fleet.gw.url}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 15_000 });
});

after(() => fleet?.close());

const lastModelSeenBy = (node: string): string | undefined =>
  fleet.sim
    .node(node)
    .requests()
    .filter((r) => r.path === '/v1/chat/completions')
    .at(-1)?.model;

test('a name without a tag reaches the Ollama node that lists it as :latest, under the name it listed', async () => {
  const completion = await client.chat.completions.create({
    model: 'llama3.2',
    messages: [{ role: 'user', content: 'hi' }],
    max_tokens: 2,
  });
  assert.equal(completion.object, 'chat.completion');
  assert.equal(lastModelSeenBy('ollama'), 'llama3.2:latest');
});

test("Ollama's fully spelled name resolves too", async () => {
  const res = await httpJson('POST', `${fleet.gw.url}/v1/chat/completions`, {
    model: 'registry.ollama.ai/library/llama3.2:latest',
    messages: [{ role: 'user', content: 'hi' }],
    max_tokens: 2,
  });
  assert.equal(res.status, 200, res.text);
  assert.equal(lastModelSeenBy('ollama'), 'llama3.2:latest');
});

test("a llama-server router's own alias routes to that router, which is sent the id it listed", async () => {
  const completion = await client.chat.completions.create({
    model: 'gpt-4o-mini',
    messages: [{ role: 'user', content: 'hi' }],
    max_tokens: 2,
  });
  assert.equal(completion.object, 'chat.completion');
  assert.equal(lastModelSeenBy('router'), 'tiny-llama-a');
});

test("each of a vLLM node's --served-model-names routes, and the node is sent the name it listed", async () => {
  for (const name of ['llama-3.1-8b', 'meta-llama/Llama-3.1-8B-Instruct']) {
    const completion = await client.chat.completions.create({
      model: name,
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 2,
    });
    assert.equal(completion.model, 'meta-llama/Llama-3.1-8B-Instruct', 'vLLM answers with its first served name');
    assert.equal(lastModelSeenBy('vllm'), name);
  }
});

test('/admin/explain reads the name as a request naming it is routed', async () => {
  const explained = await fleet.gw.explain('model=llama3.2');
  assert.equal(explained.model, 'llama3.2:latest');
  assert.equal((await fleet.gw.explain('model=gpt-4o-mini')).model, 'tiny-llama-a');
});

test('an unknown name is 404, and the closest list names the related model first', async () => {
  const res = await httpJson('POST', `${fleet.gw.url}/v1/chat/completions`, {
    model: 'llama3.3',
    messages: [{ role: 'user', content: 'hi' }],
  });
  assert.equal(res.status, 404, res.text);
  const closest = res.json<{ error: { closest_models?: string[]; message: string } }>().error;
  assert.match(closest.message, /Closest served models: llama3\.2:latest,/);
});

test('the closest list offers the names the router takes (its aliases)', async () => {
  const res = await httpJson('POST', `${fleet.gw.url}/v1/chat/completions`, {
    model: 'gpt-4o-mimi',
    messages: [{ role: 'user', content: 'hi' }],
  });
  assert.equal(res.status, 404, res.text);
  assert.match(res.json<{ error: { message: string } }>().error.message, /Closest served models: gpt-4o-mini[,.]/);
});
