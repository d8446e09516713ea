// Issue 40, items 2 (count_tokens) and 5, with the official, unchanged `@anthropic-ai/sdk` client:
// `messages.countTokens` for a model no node counts natively (a node of kind `openai`, a
// llama-server build before b7187) was answered 404 endpoint_unsupported; now the gateway answers
// it itself — from the node's tokenizer where a node has the model loaded and a tokenizer
// (`x-switchyard-count: tokenizer`), else from its upper bound (`bound`) — while a model whose node
// counts natively is still counted by that node. And an Anthropic client (`anthropic-version`) got
// OpenAI's model list (no `type`, `display_name`, `created_at`, no paging): `models.list()`,
// `models.retrieve(id)` and an unknown id now answer in Anthropic's shape, within the caller's scope.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startFleetAndGateway, type FleetAndGateway } from '#test/fixtures/in-process-fleet.ts';
import { simRequests } from '#test/fixtures/http.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { nodeChanges } from '#test/fixtures/gateway-waits.ts';
import { tokenize } from '#src/sim/tokenizer.ts';

const FLEET = `
[[node]]
name = "plain"
kind = "openai"
ttft = "5ms"
tokens_per_second = 400
models = ["open-a", "open-b", "open-c", "open-d", "open-e"]

[[node]]
name = "old"
kind = "llamacpp"
version = "b7000-1a2b3c4"
ttft = "5ms"
tokens_per_second = 400
models = ["old-coder"]

[[node]]
name = "new"
kind = "llamacpp"
ttft = "5ms"
tokens_per_second = 400
models = ["coder"]
`;

const ALL = 'sk-all-models';
const SCOPED = 'sk-only-coder';
const TENANTS = `
[[tenants]]
name = "all"
keys = ["${ALL}"]

[[tenants]]
name = "scoped"
keys = ["${SCOPED}"]
models = ["coder"]
`;

let env: FleetAndGateway;
let client: Anthropic;

before(async () => {
  env = await startFleetAndGateway(FLEET, (sim) =>
    gatewayToml(
      sim.nodes.map((n) => ({ name: n.name, url: n.url, kind: n.kind })),
      TENANTS,
    ),
  );
  await untilEvent(
    async () => {
      const hosts = (await env.gw.hosts()).hosts;
      return hosts.length === 3 && hosts.find((h) => h.name === 'old')?.server?.version === 'b7000-1a2b3c4';
    },
    [nodeChanges(env.gw)],
    'the nodes listed and the old build’s version read',
  );
  await untilEvent(
    async () => {
      const listed = await fetch(`${env.gw.url}/v1/models`, { headers: { authorization: `Bearer ${ALL}` } });
      return ((await listed.json()) as { data: unknown[] }).data.length === 7;
    },
    [nodeChanges(env.gw)],
    'every model listed',
  );
  client = new Anthropic({ baseURL: env.gw.url, apiKey: ALL, maxRetries: 0, timeout: 20_000 });
});

after(async () => {
  await env?.close();
});

const SYSTEM = 'You are terse.';
const QUESTION = 'What is the capital of France? Answer in one word.';
const TOOLS = [
  {
    name: 'lookup',
    description: 'Look a city up',
    input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] },
  },
];
const BODY = { system: SYSTEM, messages: [{ role: 'user' as const, content: QUESTION }], tools: TOOLS };

/** The prompt's pieces as the gateway reads them (system, each message, the tools) and its template allowance (16 + 8 a message). */
const PIECES = [SYSTEM, QUESTION, JSON.stringify(TOOLS)];
const TEMPLATE = 16 + 8 * 2;

test('a model whose only node has no tokenizer (kind openai) is counted from the gateway’s upper bound', async () => {
  const { data, response } = await client.messages.countTokens({ model: 'open-a', ...BODY }).withResponse();
  assert.equal(response.status, 200);
  assert.equal(response.headers.get('x-switchyard-count'), 'bound');
  const bytes = PIECES.reduce((sum, piece) => sum + Buffer.byteLength(piece), 0);
  assert.equal(data.input_tokens, bytes + TEMPLATE, 'the proven upper bound: every byte a token, plus the template');
  const exact = tokenize(PIECES.join('\n')).length + TEMPLATE;
  assert.ok(data.input_tokens >= exact, `${data.input_tokens} never below a real count (${exact})`);
  const sent = (await simRequests(env.sim.url('plain'))).filter((r) => r.path.includes('messages'));
  assert.deepEqual(sent, [], 'nothing is sent to the node');
});

test('a model whose node predates count_tokens but has a tokenizer is counted exactly by it', async () => {
  const { data, response } = await client.messages.countTokens({ model: 'old-coder', ...BODY }).withResponse();
  assert.equal(response.headers.get('x-switchyard-count'), 'tokenizer');
  assert.equal(response.headers.get('x-switchyard-count-node'), 'old');
  assert.equal(data.input_tokens, tokenize(PIECES.join('\n')).length + TEMPLATE);
  const asked = await simRequests(env.sim.url('old'));
  assert.equal(asked.filter((r) => r.path === '/tokenize').length, 1, 'its /tokenize asked once');
  assert.equal(asked.filter((r) => r.path === '/v1/messages/count_tokens').length, 0, 'never its count_tokens');
});

test('a model whose node counts natively is still counted by the node', async () => {
  const { data, response } = await client.messages.countTokens({ model: 'coder', ...BODY }).withResponse();
  assert.equal(response.headers.get('x-switchyard-count'), null);
  assert.equal(response.headers.get('x-switchyard-node'), 'new');
  assert.ok(data.input_tokens > 0);
  const asked = (await simRequests(env.sim.url('new'))).filter((r) => r.path === '/v1/messages/count_tokens');
  assert.equal(asked.length, 1);
});

test('a count without messages, or for a model no node serves, is refused in Anthropic’s shape', async () => {
  await assert.rejects(client.messages.countTokens({ model: 'open-a' } as never), (error: unknown) => {
    assert.ok(error instanceof Anthropic.BadRequestError, `got ${String(error)}`);
    const body = error.error as { type?: string; error?: { type?: string; message?: string } };
    assert.equal(body.type, 'error');
    assert.equal(body.error?.type, 'invalid_request_error');
    assert.match(String(body.error?.message), /messages/);
    return true;
  });
  await assert.rejects(client.messages.countTokens({ model: 'nope', ...BODY }), (error: unknown) => {
    assert.ok(error instanceof Anthropic.NotFoundError, `got ${String(error)}`);
    assert.equal((error.error as { error?: { type?: string } }).error?.type, 'not_found_error');
    return true;
  });
});

test('a tenant counts only its models: one outside its scope is unknown to it', async () => {
  const scoped = new Anthropic({ baseURL: env.gw.url, apiKey: SCOPED, maxRetries: 0, timeout: 20_000 });
  await assert.rejects(scoped.messages.countTokens({ model: 'open-a', ...BODY }), Anthropic.NotFoundError);
});

test('models.list answers in Anthropic’s shape, paged by limit, and iterates every model', async () => {
  const page = await client.models.list({ limit: 3 });
  assert.deepEqual(
    page.data.map((m) => m.id),
    ['coder', 'old-coder', 'open-a'],
  );
  assert.equal(page.has_more, true);
  assert.equal(page.first_id, 'coder');
  assert.equal(page.last_id, 'open-a');
  for (const model of page.data) {
    assert.equal(model.type, 'model');
    assert.equal(model.display_name, model.id);
    assert.match(model.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
  }
  const ids: string[] = [];
  for await (const model of client.models.list({ limit: 2 })) ids.push(model.id);
  assert.deepEqual(ids, ['coder', 'old-coder', 'open-a', 'open-b', 'open-c', 'open-d', 'open-e']);
  const before = await client.models.list({ limit: 2, before_id: 'open-c' });
  assert.deepEqual(
    before.data.map((m) => m.id),
    ['open-a', 'open-b'],
  );
  assert.equal(before.has_more, true, 'coder and old-coder lie before it');
  const whole = await client.models.list();
  assert.equal(whole.data.length, 7);
  assert.equal(whole.has_more, false);
});

test('models.retrieve gives one model object; an unknown id is a NotFoundError in Anthropic’s shape', async () => {
  const model = await client.models.retrieve('old-coder');
  assert.equal(model.type, 'model');
  assert.equal(model.id, 'old-coder');
  assert.equal(model.display_name, 'old-coder');
  await assert.rejects(client.models.retrieve('nope'), (error: unknown) => {
    assert.ok(error instanceof Anthropic.NotFoundError, `got ${String(error)}`);
    const body = error.error as { type?: string; error?: { type?: string; message?: string } };
    assert.equal(body.type, 'error');
    assert.equal(body.error?.type, 'not_found_error');
    assert.match(String(body.error?.message), /nope/);
    return true;
  });
});

test('a tenant-scoped key lists and retrieves only its models; one outside looks unknown', async () => {
  const scoped = new Anthropic({ baseURL: env.gw.url, apiKey: SCOPED, maxRetries: 0, timeout: 20_000 });
  const page = await scoped.models.list();
  assert.deepEqual(
    page.data.map((m) => m.id),
    ['coder'],
  );
  assert.equal(page.has_more, false);
  assert.equal((await scoped.models.retrieve('coder')).id, 'coder');
  await assert.rejects(scoped.models.retrieve('open-a'), Anthropic.NotFoundError);
});

test('a bad limit is refused, and a wrong key answered, in Anthropic’s shape', async () => {
  await assert.rejects(client.models.list({ limit: 5000 }), (error: unknown) => {
    assert.ok(error instanceof Anthropic.BadRequestError, `got ${String(error)}`);
    assert.equal((error.error as { error?: { type?: string } }).error?.type, 'invalid_request_error');
    return true;
  });
  const anonymous = new Anthropic({ baseURL: env.gw.url, apiKey: 'wrong', maxRetries: 0 });
  await assert.rejects(anonymous.models.list(), (error: unknown) => {
    assert.ok(error instanceof Anthropic.AuthenticationError, `got ${String(error)}`);
    assert.equal((error.error as { type?: string }).type, 'error');
    return true;
  });
});

test('without anthropic-version the listing is OpenAI’s, unchanged', async () => {
  const res = await fetch(`${env.gw.url}/v1/models?limit=1`, { headers: { authorization: `Bearer ${ALL}` } });
  const body = (await res.json()) as { object?: string; data: { object?: string }[]; has_more?: unknown };
  assert.equal(body.object, 'list');
  assert.equal(body.data.length, 7);
  assert.equal(body.data[0]?.object, 'model');
  assert.equal(body.has_more, undefined);
  const one = await fetch(`${env.gw.url}/v1/models/coder`, { headers: { authorization: `Bearer ${ALL}` } });
  assert.equal(((await one.json()) as { object?: string }).object, 'model');
});
