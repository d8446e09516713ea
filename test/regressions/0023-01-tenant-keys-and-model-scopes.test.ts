// Issue 23 items 1–2: a client key names its tenant; a tenant's model scope hides every model
// outside it. Through the real HTTP interface with the official openai client: an unknown key is
// 401; an out-of-scope model is answered exactly as a model no node serves (404 model_not_found,
// the same body, suggestions only from inside the scope) and never reaches a node; /v1/models and
// /v1/models/{id} show only the scope; `[server] api_keys` keeps working as the tenant `default`.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI, { APIError } from 'openai';
import { startFleetAndGateway, type FleetAndGateway } from '#test/fixtures/in-process-fleet.ts';
import { gatewayConfig, modelState, waitForNode } from '#test/fixtures/gateway-state.ts';
import { httpJson, simRequests } from '#test/fixtures/http.ts';

const FLEET = ['alpha', 'beta']
  .map(
    (name) => `[[node]]\nname = "${name}"\nkind = "vllm"\nmodels = ["${name}-chat-8b"]\nttft = "2ms"\ntokens_per_second = 1000\n`,
  )
  .join('\n');
const ALPHA_KEY = 'sk-alpha-only-3c1f';
const ALL_KEY = 'sk-everything-9d2e';
const LEGACY_KEY = 'sk-legacy-api-key-77';

let fleet: FleetAndGateway;

before(async () => {
  fleet = await startFleetAndGateway(FLEET, (sim) =>
    gatewayConfig({
      health: { interval: '100ms', timeout: '5s', failThreshold: 2 },
      discovery: { interval: '100ms', timeout: '5s' },
      nodes: sim.nodes.map((n) => ({ name: n.name, url: n.url, kind: 'vllm' })),
      extra: [
        '[[tenants]]',
        'name = "alpha-team"',
        `keys = ["${ALPHA_KEY}"]`,
        'models = ["alpha-*"]',
        '[[tenants]]',
        'name = "ops"',
        `keys = ["${ALL_KEY}"]`,
      ].join('\n'),
    }).replace('listen = "127.0.0.1:0"', `listen = "127.0.0.1:0"\napi_keys = ["${LEGACY_KEY}"]`),
  );
  for (const name of ['alpha', 'beta']) await waitForNode(fleet.gw, name, modelState('known'), 'known');
});

after(async () => {
  await fleet?.close();
});

const client = (apiKey: string): OpenAI => new OpenAI({ baseURL: `${fleet.gw.url}/v1`, apiKey, maxRetries: 0, timeout: 15_000 });

async function chatError(apiKey: string, model: string): Promise<APIError> {
  try {
    await client(apiKey).chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 });
  } catch (error) {
    assert.ok(error instanceof APIError, String(error));
    return error;
  }
  assert.fail(`a chat for ${model} succeeded`);
}

test('each key reaches its tenant; an unknown key is 401; [server] api_keys is the tenant default', async () => {
  const ok = await client(ALPHA_KEY).chat.completions.create({
    model: 'alpha-chat-8b',
    messages: [{ role: 'user', content: 'hi' }],
    max_tokens: 4,
  });
  assert.equal(ok.model, 'alpha-chat-8b');
  assert.ok(
    await client(ALL_KEY).chat.completions.create({
      model: 'beta-chat-8b',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 4,
    }),
  );
  assert.ok(
    await client(LEGACY_KEY).chat.completions.create({
      model: 'beta-chat-8b',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 4,
    }),
  );
  const unknown = await chatError('sk-nobody', 'alpha-chat-8b');
  assert.equal(unknown.status, 401);
  assert.equal(unknown.code, 'invalid_api_key');
  const report = (await httpJson('GET', `${fleet.gw.url}/admin/tenants`)).json<{
    tenants: { name: string; keys: string[]; today: { requests: number } }[];
  }>();
  assert.deepEqual(
    report.tenants.map((t) => [t.name, t.today.requests]),
    [
      ['alpha-team', 1],
      ['ops', 1],
      ['default', 1],
    ],
  );
  const shown = JSON.stringify(report) + JSON.stringify(fleet.gw.logs());
  for (const key of [ALPHA_KEY, ALL_KEY, LEGACY_KEY]) assert.ok(!shown.includes(key), 'no key is shown or logged');
  assert.match(report.tenants[0]?.keys[0] ?? '', /^[0-9a-f]{8}$/, 'a key shows as its short tag');
});

test('an out-of-scope model is answered exactly as a model no node serves, and never reaches its node', async () => {
  const before_ = (await simRequests(fleet.sim.url('beta'))).filter((r) => r.path === '/v1/chat/completions').length;
  const hidden = await chatError(ALPHA_KEY, 'beta-chat-8b');
  const unknown = await chatError(ALPHA_KEY, 'gamma-chat-8b');
  for (const error of [hidden, unknown]) {
    assert.equal(error.status, 404);
    assert.equal(error.code, 'model_not_found');
    assert.equal(error.type, 'invalid_request_error');
    assert.equal(error.param, 'model');
  }
  const body = (e: APIError, name: string): string => JSON.stringify(e.error).replaceAll(name, 'NAME');
  assert.equal(body(hidden, 'beta-chat-8b'), body(unknown, 'gamma-chat-8b'), 'the same body, name for name');
  assert.match(hidden.message, /Closest served models: alpha-chat-8b\./, 'suggestions come only from the scope');
  const after_ = (await simRequests(fleet.sim.url('beta'))).filter((r) => r.path === '/v1/chat/completions').length;
  assert.equal(after_, before_, 'the node serving the hidden model never saw the request');
  // A tenant that sees everything is told of both.
  assert.match(
    (await chatError(ALL_KEY, 'gamma-chat-8b')).message,
    /Closest served models: (alpha|beta)-chat-8b, (alpha|beta)-chat-8b\./,
  );
});

test("/v1/models lists only the scope; /v1/models/{id} of a hidden model is the unknown model's 404", async () => {
  const listed = await client(ALPHA_KEY).models.list();
  assert.deepEqual(
    listed.data.map((m) => m.id),
    ['alpha-chat-8b'],
  );
  const everything = await client(ALL_KEY).models.list();
  assert.deepEqual(everything.data.map((m) => m.id).sort(), ['alpha-chat-8b', 'beta-chat-8b']);
  const auth = { authorization: `Bearer ${ALPHA_KEY}` };
  const hidden = await httpJson('GET', `${fleet.gw.url}/v1/models/beta-chat-8b`, undefined, auth);
  const unknown = await httpJson('GET', `${fleet.gw.url}/v1/models/gamma-chat-8b`, undefined, auth);
  assert.equal(hidden.status, 404);
  assert.equal(hidden.text.replaceAll('beta-chat-8b', 'NAME'), unknown.text.replaceAll('gamma-chat-8b', 'NAME'));
  assert.equal((await httpJson('GET', `${fleet.gw.url}/v1/models/alpha-chat-8b`, undefined, auth)).status, 200);
});
