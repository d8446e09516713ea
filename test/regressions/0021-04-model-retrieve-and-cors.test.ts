// Issue 21, item 4: `GET /v1/models/{id}` (the openai client's `models.retrieve`) was 404, and a
// browser's CORS preflight got 405. Now the fleet list's entry is answered (ids with `/` and `:`,
// resolved as a request's model is), and `[server] cors_origins` answers preflights and marks the
// answers of allowed origins — never on /admin, in every worker, applied on reload.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { Agent, request } from 'undici';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startFleetAndGateway, type FleetAndGateway } from '#test/fixtures/in-process-fleet.ts';
import { waitForHost } from '#test/fixtures/context.ts';
import { httpJson } from '#test/fixtures/http.ts';

const FLEET = `
[[node]]
name = "v"
kind = "vllm"
models = ["meta-llama/Llama-3-8B"]
ttft = "1ms"

[[node]]
name = "o"
kind = "ollama"
models = ["llama3.2:latest"]
ttft = "1ms"
load_time = "1ms"
`;

const ALLOWED = 'https://chat.example.com';
const configFor = (fleet: { url(name: string): string }, server: string): string =>
  gatewayToml(
    [
      { name: 'v', url: fleet.url('v'), kind: 'vllm' },
      { name: 'o', url: fleet.url('o'), kind: 'ollama' },
    ],
    '[[models.available]]\nname = "meta-llama/Llama-3-8B"\naliases = ["llama-3-8b"]\n',
    server,
  );

async function startListed(server: string): Promise<FleetAndGateway> {
  const fleet = await startFleetAndGateway(FLEET, (sim) => configFor(sim, server));
  for (const name of ['v', 'o']) await waitForHost(fleet.gw, name, (h) => h.discovery.state === 'known', 'listed');
  return fleet;
}

/** One request on a connection of its own (so with workers > 1 the kernel picks the worker). */
async function fresh(method: 'OPTIONS' | 'POST' | 'GET', url: string, headers: Record<string, string>, body?: unknown) {
  const agent = new Agent({ connections: 1 });
  try {
    const res = await request(url, {
      method,
      headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
      dispatcher: agent,
      signal: AbortSignal.timeout(30_000),
    });
    return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
  } finally {
    await agent.close();
  }
}

const PREFLIGHT = {
  origin: ALLOWED,
  'access-control-request-method': 'POST',
  'access-control-request-headers': 'authorization, content-type, x-stainless-os',
};
const CHAT = { model: 'llama-3-8b', messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 };

describe('GET /v1/models/{id}', () => {
  let fleet: FleetAndGateway;
  let client: OpenAI;
  before(async () => {
    fleet = await startListed('');
    client = new OpenAI({ baseURL: `${fleet.gw.url}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 15_000 });
  });
  after(() => fleet?.close());

  test('models.retrieve answers the fleet list entry, for ids with "/" and ":"', async () => {
    const listed = (await httpJson('GET', `${fleet.gw.url}/v1/models`)).json<{ data: { id: string }[] }>().data;
    for (const id of ['meta-llama/Llama-3-8B', 'llama3.2:latest']) {
      const model = await client.models.retrieve(id);
      const { created: _created, ...entry } = model as unknown as Record<string, unknown>;
      const { created: _listedCreated, ...expected } = listed.find((m) => m.id === id) as unknown as Record<string, unknown>;
      assert.deepEqual(entry, expected, id);
      assert.equal(model.object, 'model');
    }
  });

  test("the id resolves as a request model does: an alias, Ollama's implicit tag, an unencoded path", async () => {
    assert.equal((await client.models.retrieve('llama-3-8b')).id, 'meta-llama/Llama-3-8B');
    assert.equal((await client.models.retrieve('llama3.2')).id, 'llama3.2:latest');
    const raw = await httpJson('GET', `${fleet.gw.url}/v1/models/meta-llama/Llama-3-8B`);
    assert.equal(raw.status, 200, raw.text);
    assert.equal(raw.json<{ id: string }>().id, 'meta-llama/Llama-3-8B');
  });

  test("an unknown id is 404 in OpenAI's error shape", async () => {
    await assert.rejects(client.models.retrieve('meta-llama/Llama-3-70B'), (error: unknown) => {
      assert.ok(error instanceof OpenAI.NotFoundError, String(error));
      assert.equal(error.code, 'model_not_found');
      return true;
    });
    const raw = await httpJson('GET', `${fleet.gw.url}/v1/models/nope`);
    assert.equal(raw.status, 404);
    const body = raw.json<{ error: { message: string; type: string; param: string; code: string } }>();
    assert.deepEqual([body.error.type, body.error.param, body.error.code], ['invalid_request_error', 'model', 'model_not_found']);
  });
});

describe('[server] cors_origins', () => {
  let fleet: FleetAndGateway;
  before(async () => {
    fleet = await startListed(`cors_origins = ["${ALLOWED}"]`);
  });
  after(() => fleet?.close());

  test('a preflight from an allowed origin is answered 204 with the Access-Control-Allow-* headers', async () => {
    const res = await fresh('OPTIONS', `${fleet.gw.url}/v1/chat/completions`, PREFLIGHT);
    assert.equal(res.status, 204, res.text);
    assert.equal(res.headers['access-control-allow-origin'], ALLOWED);
    assert.match(String(res.headers['access-control-allow-methods']), /\bPOST\b/);
    const allowed = String(res.headers['access-control-allow-headers']).split(', ');
    for (const name of ['authorization', 'content-type', 'x-api-key', 'x-stainless-os'])
      assert.ok(allowed.includes(name), `${name} in ${allowed.join(',')}`);
    assert.equal(res.headers['access-control-max-age'], '600');
    assert.match(String(res.headers['vary']), /Origin/);
  });

  test('real answers to an allowed origin carry Access-Control-Allow-Origin and Vary: Origin; others get none', async () => {
    const ok = await fresh('POST', `${fleet.gw.url}/v1/chat/completions`, { origin: ALLOWED }, CHAT);
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.headers['access-control-allow-origin'], ALLOWED);
    assert.match(String(ok.headers['vary']), /Origin/);
    assert.match(String(ok.headers['access-control-expose-headers']), /x-request-id/);
    const listed = await fresh('GET', `${fleet.gw.url}/v1/models/llama3.2`, { origin: ALLOWED });
    assert.equal(listed.headers['access-control-allow-origin'], ALLOWED);
    const unknown = await fresh('POST', `${fleet.gw.url}/v1/chat/completions`, { origin: ALLOWED }, { ...CHAT, model: 'nope' });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.headers['access-control-allow-origin'], ALLOWED, 'errors are readable by the page too');
    for (const origin of ['https://evil.example.com', 'https://chat.example.com.evil.net']) {
      const other = await fresh('POST', `${fleet.gw.url}/v1/chat/completions`, { origin }, CHAT);
      assert.equal(other.status, 200);
      assert.deepEqual(
        Object.keys(other.headers).filter((h) => h.startsWith('access-control-')),
        [],
        origin,
      );
      const preflight = await fresh('OPTIONS', `${fleet.gw.url}/v1/chat/completions`, { ...PREFLIGHT, origin });
      assert.deepEqual(
        Object.keys(preflight.headers).filter((h) => h.startsWith('access-control-')),
        [],
        origin,
      );
    }
  });

  test('never on /admin', async () => {
    const get = await fresh('GET', `${fleet.gw.url}/admin/hosts`, { origin: ALLOWED });
    assert.equal(get.status, 200);
    assert.equal(get.headers['access-control-allow-origin'], undefined);
    const preflight = await fresh('OPTIONS', `${fleet.gw.url}/admin/hosts`, {
      ...PREFLIGHT,
      'access-control-request-method': 'GET',
    });
    assert.equal(preflight.headers['access-control-allow-origin'], undefined);
    assert.notEqual(preflight.status, 204);
  });

  test('a reload applies it: off again answers OPTIONS 405 with no CORS, "*" allows every origin', async () => {
    const off = await fleet.gw.reload(configFor(fleet.sim, ''));
    assert.ok(off.ok, JSON.stringify(off));
    const closed = await fresh('OPTIONS', `${fleet.gw.url}/v1/chat/completions`, PREFLIGHT);
    assert.equal(closed.status, 405);
    assert.equal(closed.headers['access-control-allow-origin'], undefined);
    const any = await fleet.gw.reload(configFor(fleet.sim, 'cors_origins = "*"'));
    assert.ok(any.ok, JSON.stringify(any));
    const open = await fresh('OPTIONS', `${fleet.gw.url}/v1/chat/completions`, {
      ...PREFLIGHT,
      origin: 'https://elsewhere.example',
    });
    assert.equal(open.status, 204);
    assert.equal(open.headers['access-control-allow-origin'], '*');
  });
});

describe('[server] cors_origins with workers = 2', () => {
  let fleet: FleetAndGateway;
  before(async () => {
    fleet = await startListed(`workers = 2\ncors_origins = ["${ALLOWED}"]`);
  });
  after(() => fleet?.close());

  test('every worker answers the preflight and marks its answers', async () => {
    for (let i = 0; i < 12; i += 1) {
      const preflight = await fresh('OPTIONS', `${fleet.gw.url}/v1/chat/completions`, PREFLIGHT);
      assert.equal(preflight.status, 204);
      assert.equal(preflight.headers['access-control-allow-origin'], ALLOWED);
      const answer = await fresh('POST', `${fleet.gw.url}/v1/chat/completions`, { origin: ALLOWED }, CHAT);
      assert.equal(answer.status, 200, answer.text);
      assert.equal(answer.headers['access-control-allow-origin'], ALLOWED);
    }
    const rows = (await httpJson('GET', `${fleet.gw.url}/admin/runtime`)).json<{
      workers: { worker: number; admitted: number }[];
    }>().workers;
    assert.equal(rows.length, 2);
    for (const row of rows) assert.ok(row.admitted > 0, `worker ${row.worker} answered some: ${JSON.stringify(rows)}`);
  });
});
