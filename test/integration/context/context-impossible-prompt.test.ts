// A prompt no node can fit is answered 400 context_length_exceeded in OpenAI's shape by the gateway
// itself: no node receives an inference request for it (every sim's own recording proves it), the
// message gives the prompt size and the largest context, and the rejection is counted in /metrics.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startGateway, startSimFleet, type GatewayUnderTest, type SimFleet } from '#test/fixtures/in-process-fleet.ts';
import { httpJson, simRequests, type JsonResponse } from '#test/fixtures/http.ts';
import { metric, servedBy } from '#test/fixtures/gateway-state.ts';
import { chatOfTokens, waitForHost } from '#test/fixtures/context.ts';

const FLEET = `
[[node]]
name = "llama"
kind = "llamacpp"
models = ["tight"]
context = 1024
ttft = "2ms"
tokens_per_second = 1000

[[node]]
name = "vllm"
kind = "vllm"
models = ["tight"]
context = 2048
ttft = "2ms"
tokens_per_second = 1000

[[node]]
name = "sglang"
kind = "sglang"
models = ["tight"]
context = 1024
ttft = "2ms"
tokens_per_second = 1000
`;

const NODES = ['llama', 'vllm', 'sglang'];
// The figure the 400 quotes is a proven bound: /tokenize's count of the text, "at least" (the
// template's real size is not known; the gateway allows 16 + 8 per message on top as its upper bound).

let sim: SimFleet;
let gw: GatewayUnderTest;

before(async () => {
  sim = await startSimFleet(FLEET);
  gw = await startGateway(gatewayToml(sim.nodes.map((n) => ({ name: n.name, url: n.url, kind: n.kind }))));
  await waitForHost(gw, 'llama', (h) => h.models?.tight?.n_ctx === 1024, 'context known');
  await waitForHost(gw, 'vllm', (h) => h.models?.tight?.n_ctx === 2048, 'context known');
  await waitForHost(gw, 'sglang', (h) => h.models?.tight?.n_ctx === 1024, 'context known');
  for (const node of NODES) await httpJson('POST', `${sim.url(node)}/__sim/reset`);
});

after(async () => {
  await gw?.close();
  await sim?.close();
});

/** Everything each sim recorded apart from the gateway's polling (health, listings, /props). */
async function nonPollingRequests(): Promise<string[]> {
  // /metrics: the load scrape (least-loaded scoring) polls it on its own clock.
  const polling = new Set(['/health', '/v1/health', '/v1/models', '/models', '/props', '/api/ps', '/metrics']);
  const out: string[] = [];
  for (const node of NODES) {
    for (const r of await simRequests(sim.url(node))) if (!polling.has(r.path)) out.push(`${node} ${r.method} ${r.path}`);
  }
  return out;
}

const inferencePosts = async (): Promise<string[]> => (await nonPollingRequests()).filter((line) => !line.endsWith('/tokenize'));

function assertContextError(res: JsonResponse, promptTokens: number): void {
  assert.equal(res.status, 400, res.text);
  assert.match(String(res.headers['content-type']), /application\/json/);
  const { error } = res.json<{ error: Record<string, unknown> }>();
  assert.deepEqual(Object.keys(error).slice(0, 4), ['message', 'type', 'param', 'code']);
  assert.equal(error.type, 'invalid_request_error');
  assert.equal(error.param, 'messages');
  assert.equal(error.code, 'context_length_exceeded');
  assert.match(String(error.message), /maximum context length is 2048 tokens/, 'names the largest context');
  assert.match(String(error.message), new RegExp(`at least ${promptTokens}\\b`), 'names the prompt size as a bound');
  assert.equal(error.n_ctx, undefined, 'no upstream dialect leaks through');
}

test('a prompt longer than every context gets 400 context_length_exceeded and no node is asked to run it', async () => {
  const res = await httpJson('POST', `${gw.url}/v1/chat/completions`, chatOfTokens('tight', 3000));
  assertContextError(res, 3000);
  assert.deepEqual(await inferencePosts(), []);
});

test('the answer budget counts: a prompt that fits only without its max_tokens is refused the same way', async () => {
  const res = await httpJson('POST', `${gw.url}/v1/chat/completions`, chatOfTokens('tight', 1500, { max_tokens: 1000 }));
  assertContextError(res, 1500);
  assert.match(res.json<{ error: { message: string } }>().error.message, /1000 for the completion/);
  assert.deepEqual(await inferencePosts(), []);
});

test('a streaming request gets the same 400 as plain JSON, before any event stream', async () => {
  const res = await request(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(chatOfTokens('tight', 3000, { stream: true })),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.body.text();
  assertContextError({ status: res.statusCode, headers: res.headers, text, json: <T>() => JSON.parse(text) as T }, 3000);
  assert.deepEqual(await inferencePosts(), []);
});

test('a prompt typically far too large is counted by one tokenizer (no proof yet), then refused without an inference request', async () => {
  for (const node of NODES) await httpJson('POST', `${sim.url(node)}/__sim/reset`);
  const res = await httpJson('POST', `${gw.url}/v1/chat/completions`, chatOfTokens('tight', 20_000, { max_tokens: 10 }));
  assert.equal(res.status, 400, res.text);
  assert.equal(res.json<{ error: { code: string } }>().error.code, 'context_length_exceeded');
  assert.equal((await nonPollingRequests()).filter((line) => line.endsWith('/tokenize')).length, 1);
  assert.deepEqual(await inferencePosts(), []);
});

test('a prompt whose proven lower bound (bytes / 256) exceeds every context is refused without contacting any node at all', async () => {
  for (const node of NODES) await httpJson('POST', `${sim.url(node)}/__sim/reset`);
  const res = await httpJson(
    'POST',
    `${gw.url}/v1/chat/completions`,
    chatOfTokens('tight', Math.ceil((256 * 2048) / 5) + 10, { max_tokens: 10 }),
  );
  assert.equal(res.status, 400, res.text);
  assert.equal(res.json<{ error: { code: string } }>().error.code, 'context_length_exceeded');
  assert.deepEqual(await nonPollingRequests(), []);
});

test('every refusal is counted in gateway_context_rejections_total, and a prompt that fits one node still runs there', async () => {
  assert.equal(await metric(gw.url, 'gateway_context_rejections_total', { model: 'tight' }), 5);
  const fits = await httpJson('POST', `${gw.url}/v1/chat/completions`, chatOfTokens('tight', 1500, { max_tokens: 100 }));
  assert.equal(fits.status, 200, fits.text);
  assert.equal(servedBy(fits), 'vllm');
  assert.equal(await metric(gw.url, 'gateway_context_rejections_total', { model: 'tight' }), 5);
});
