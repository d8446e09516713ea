// Issue 41 item 5 against a real llama-server router (runs only when LLAMA_SERVER_BIN and
// LLAMA_MODELS_DIR are set; not run where it was written): a control sent mid-stream through the
// gateway reaches the router running that completion (the router answers 200 with `success`: a
// tiny model arms no reasoning budget, so `false` with the router's message is the expected word),
// another tenant's control is the gateway's 404; `/v1/chat/completions/input_tokens` for the loaded
// model is the router's own count (`object: "response.input_tokens"`), and for a model the router
// has not loaded the gateway counts and the model stays unloaded (a router loads to count: §7.z).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import type { GatewayUnderTest } from '#test/fixtures/in-process-fleet.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { realRouterSkip, type RealRouter } from '#test/fixtures/real-llama-router.ts';
import { startTenantRouterGateway, type TenantRouterRig } from '#test/fixtures/real-router-tenants.ts';

const skip = realRouterSkip;
const A_KEY = 'sk-real-a';
const B_KEY = 'sk-real-b';
const auth = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` });

let router: RealRouter | undefined;
let gw: GatewayUnderTest | undefined;
let ids: string[] = [];

let rig: TenantRouterRig | undefined;

before(async () => {
  if (skip !== false) return;
  rig = await startTenantRouterGateway({ a: A_KEY, b: B_KEY }, '60s');
  ({ router, gw, ids } = rig);
});

after(async () => {
  await rig?.close();
});

test('a control mid-stream reaches the router running the completion; another tenant gets 404', { skip }, async () => {
  const [first] = ids as [string];
  const controller = new AbortController();
  const stream = await request(`${gw?.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...auth(A_KEY) },
    body: JSON.stringify({
      model: first,
      messages: [{ role: 'user', content: 'count to fifty' }],
      max_tokens: 400,
      stream: true,
    }),
    signal: controller.signal,
  });
  stream.body.on('error', () => {});
  try {
    assert.equal(stream.statusCode, 200);
    const text = await new Promise<string>((resolve) => {
      let seen = '';
      stream.body.on('data', (chunk: Buffer) => {
        seen += chunk.toString('utf8');
        if (seen.includes('\n\n')) resolve(seen);
      });
    });
    const id = (JSON.parse(text.slice(text.indexOf('data:') + 5, text.indexOf('\n\n'))) as { id: string }).id;
    const body = { id, action: 'reasoning_end', model: first };
    const own = await httpJson('POST', `${gw?.url}/v1/chat/completions/control`, body, auth(A_KEY));
    process.stderr.write(`real router control: ${own.status} ${own.text}\n`);
    assert.equal(own.status, 200, own.text);
    assert.equal(typeof own.json()['success'], 'boolean');
    assert.equal(own.headers['x-switchyard-node'], 'router');
    const other = await httpJson('POST', `${gw?.url}/v1/chat/completions/control`, body, auth(B_KEY));
    assert.equal(other.status, 404);
  } finally {
    controller.abort();
  }
});

test('input_tokens: the router counts a loaded model; the gateway counts one it has not loaded', { skip }, async () => {
  const [first, second] = ids as [string, string];
  const chat = { messages: [{ role: 'user', content: 'one two three four' }] };
  const loaded = await httpJson('POST', `${gw?.url}/v1/chat/completions/input_tokens`, { model: first, ...chat }, auth(A_KEY));
  process.stderr.write(`real router input_tokens: ${loaded.status} ${loaded.text}\n`);
  assert.equal(loaded.status, 200, loaded.text);
  assert.equal(loaded.json()['object'], 'response.input_tokens');
  assert.equal(loaded.headers['x-switchyard-count'], undefined);
  const status = async (id: string): Promise<string | undefined> =>
    (await router?.listing())?.find((m) => m.id === id)?.status?.value;
  assert.notEqual(await status(second), 'loaded');
  const unloaded = await httpJson('POST', `${gw?.url}/v1/chat/completions/input_tokens`, { model: second, ...chat }, auth(A_KEY));
  assert.equal(unloaded.status, 200, unloaded.text);
  assert.notEqual(unloaded.headers['x-switchyard-count'], undefined);
  assert.notEqual(await status(second), 'loaded', 'counting loaded nothing');
});
