// A plain single-model llama-server keeps working as before issue 4: chat, streaming, completions
// and embeddings pass through; its /admin/hosts entry has role "single" with the host figures from
// the plain /props; and the gateway never asks it the router-only `/props?model=`.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startGateway, startSimFleet, type GatewayUnderTest, type SimFleet } from '#test/fixtures/in-process-fleet.ts';
import { httpJson, simRequests } from '#test/fixtures/http.ts';
import { servedBy } from '#test/fixtures/gateway-state.ts';
import { chatOfTokens, hostOf, waitForHost } from '#test/fixtures/context.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { nodeChanges, requestEnds } from '#test/fixtures/gateway-waits.ts';

const FLEET = `
[[node]]
name = "plain"
kind = "llamacpp"
models = ["solo-plain"]
context = 8192
slots = 4
ttft = "5ms"
tokens_per_second = 500
`;

let sim: SimFleet;
let gw: GatewayUnderTest;

before(async () => {
  sim = await startSimFleet(FLEET);
  // kind "auto": what an operator who names no kind gets.
  gw = await startGateway(gatewayToml([{ name: 'plain', url: sim.url('plain'), kind: 'auto' }]));
  await waitForHost(gw, 'plain', (h) => h.role === 'single' && h.models?.['solo-plain'] !== undefined, 'host figures');
});

after(async () => {
  await gw?.close();
  await sim?.close();
});

test('chat, completions and embeddings pass through to a single llama-server', async () => {
  const chat = await httpJson('POST', `${gw.url}/v1/chat/completions`, chatOfTokens('solo-plain', 4, { max_tokens: 5 }));
  assert.equal(chat.status, 200, chat.text);
  assert.equal(servedBy(chat), 'plain');
  const body = chat.json<{ object: string; model: string; usage: { completion_tokens: number } }>();
  assert.equal(body.object, 'chat.completion');
  assert.equal(body.usage.completion_tokens, 5);

  const completion = await httpJson('POST', `${gw.url}/v1/completions`, {
    model: 'solo-plain',
    prompt: 'abcd abcd',
    max_tokens: 3,
  });
  assert.equal(completion.status, 200, completion.text);
  const embedding = await httpJson('POST', `${gw.url}/v1/embeddings`, { model: 'solo-plain', input: 'abcd' });
  assert.equal(embedding.status, 200, embedding.text);
});

test('a streamed chat arrives as server-sent events ending in [DONE]', async () => {
  const res = await request(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(chatOfTokens('solo-plain', 4, { max_tokens: 6, stream: true })),
    signal: AbortSignal.timeout(10_000),
  });
  assert.equal(res.statusCode, 200);
  assert.match(String(res.headers['content-type']), /text\/event-stream/);
  const text = await res.body.text();
  const events = text.split('\n\n').filter((e) => e.startsWith('data: '));
  assert.ok(events.length >= 6, `one event per token at least (${events.length})`);
  assert.equal(events.at(-1), 'data: [DONE]');
});

test('its hosts entry has role "single", the host figures, and no lease left', async () => {
  await untilEvent(
    async () => (await hostOf(gw.url, 'plain')).in_flight === 0,
    [requestEnds(gw), nodeChanges(gw)],
    'requests finished',
  );
  const host = await hostOf(gw.url, 'plain');
  assert.equal(host.role, 'single');
  assert.deepEqual(host.loaded, ['solo-plain']);
  assert.deepEqual(host.available_on_demand, []);
  assert.deepEqual(host.models, {
    'solo-plain': { n_ctx: 8192, slots: 4, guaranteed_ctx: 2048, kv: { mode: 'unified', source: 'default' } },
  });
  assert.deepEqual(host.leases, {});
});

test('the gateway asks a single server only its plain /props, never the router form', async () => {
  const props = (await simRequests(sim.url('plain'))).filter((r) => r.path === '/props');
  assert.ok(props.length >= 1, 'polled');
  for (const r of props) assert.deepEqual(r.query, {}, `plain /props only: ${JSON.stringify(r)}`);
});
