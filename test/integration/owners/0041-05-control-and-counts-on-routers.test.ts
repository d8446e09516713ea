// Issue 41 item 5 on llama-server routers (the simulator's, faithful to 3f545becc): a control
// `{id, action, model}` sent while the completion streams reaches the router (and child) running it
// — the gateway learned the id from the stream's first chunk — and acts on it (`{"success": true}`);
// another tenant gets the gateway's 404. The OpenAI-style counts go by model to a router that has
// the model loaded, and for a model no router has loaded are counted by the gateway: no router is
// asked, nothing is loaded.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { httpJson, simRequests } from '#test/fixtures/http.ts';
import { startRouterRig, type RouterRig } from '#test/fixtures/router-fleet.ts';
import { tenantsToml } from '#test/fixtures/tenant-gateway.ts';

const A_KEY = 'sk-router-tenant-a';
const B_KEY = 'sk-router-tenant-b';
const ROUTERS = ['r1', 'r2'];

let rig: RouterRig;

before(async () => {
  rig = await startRouterRig({
    routers: ROUTERS.map((name) => ({
      name,
      modelsMax: 1,
      loadTime: '50ms',
      // Slow: a stream is still generating when its control is sent.
      more: ['ttft = "2ms"', 'tokens_per_second = 5'],
      models: [
        ['model-a', 'loaded'],
        ['model-b', 'unloaded'],
      ],
    })),
    gateway: tenantsToml([
      { name: 'team-a', keys: [A_KEY] },
      { name: 'team-b', keys: [B_KEY] },
    ]),
  });
});

after(async () => {
  await rig?.close();
});

const auth = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` });

test('a control sent mid-stream reaches the router running the completion and acts on it; another tenant gets 404', async () => {
  const controller = new AbortController();
  const stream = await request(`${rig.gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...auth(A_KEY) },
    body: JSON.stringify({
      model: 'model-a',
      messages: [{ role: 'user', content: 'think first' }],
      max_tokens: 200,
      stream: true,
      reasoning_control: true,
    }),
    signal: controller.signal,
  });
  stream.body.on('error', () => {});
  try {
    assert.equal(stream.statusCode, 200);
    const node = stream.headers['x-switchyard-node'];
    // Read on without breaking off: leaving the body would end the stream, and the generation.
    const text = await new Promise<string>((resolve) => {
      let seen = '';
      stream.body.on('data', (chunk: Buffer) => {
        seen += chunk.toString('utf8');
        if (seen.includes('\n\n')) resolve(seen);
      });
    });
    const id = (JSON.parse(text.slice(text.indexOf('data:') + 5, text.indexOf('\n\n'))) as { id: string }).id;
    const body = { id, action: 'reasoning_end', model: 'model-a' };
    const own = await httpJson('POST', `${rig.gw.url}/v1/chat/completions/control`, body, auth(A_KEY));
    assert.equal(own.status, 200, own.text);
    assert.deepEqual(own.json(), { success: true });
    assert.equal(own.headers['x-switchyard-node'], node);
    const other = await httpJson('POST', `${rig.gw.url}/v1/chat/completions/control`, body, auth(B_KEY));
    assert.equal(other.status, 404);
    assert.equal(other.json<{ error: { code: string } }>().error.code, 'not_found');
    const unknown = await httpJson(
      'POST',
      `${rig.gw.url}/v1/chat/completions/control`,
      { ...body, id: 'chatcmpl-x' },
      auth(A_KEY),
    );
    assert.equal(unknown.status, 404);
    const asked = (await Promise.all(ROUTERS.map((r) => simRequests(rig.sim.url(r))))).flat();
    assert.equal(asked.filter((r) => r.path === '/v1/chat/completions/control').length, 1, 'only the owner was asked, once');
  } finally {
    controller.abort();
  }
});

test('the OpenAI-style counts: natively where the model is loaded, at the gateway where it is not (nothing loads)', async () => {
  const chat = { messages: [{ role: 'user', content: 'one two three four' }] };
  const loaded = await httpJson(
    'POST',
    `${rig.gw.url}/v1/chat/completions/input_tokens`,
    { model: 'model-a', ...chat },
    auth(A_KEY),
  );
  assert.equal(loaded.status, 200, loaded.text);
  assert.equal(loaded.json()['object'], 'response.input_tokens');
  assert.equal(loaded.headers['x-switchyard-count'], undefined, 'counted by the router');
  for (const [path, body] of [
    ['/v1/chat/completions/input_tokens', { model: 'model-b', ...chat }],
    ['/v1/responses/input_tokens', { model: 'model-b', input: 'one two three four' }],
  ] as const) {
    const unloaded = await httpJson('POST', `${rig.gw.url}${path}`, body, auth(A_KEY));
    assert.equal(unloaded.status, 200, unloaded.text);
    assert.equal(unloaded.json()['object'], 'response.input_tokens');
    assert.ok(Number(unloaded.json()['input_tokens']) >= 4);
    assert.equal(unloaded.headers['x-switchyard-count'], 'bound', `${path}: counted at the gateway`);
  }
  const asked = (await Promise.all(ROUTERS.map((r) => simRequests(rig.sim.url(r))))).flat();
  assert.deepEqual(
    asked.filter((r) => r.path.endsWith('/input_tokens')).map((r) => r.model),
    ['model-a'],
    'no router was asked to count model-b',
  );
  for (const r of ROUTERS) assert.equal(await rig.routerStatus('model-b', r), 'unloaded');
});
