// Anthropic's count_tokens answered by the gateway (src/proxy/request/gateway-count.ts): who counts
// (a table over the fleet: the gateway only where some node lists the model and none of those alive
// serves the endpoint), and how (a loaded node's tokenizer, else the upper bound, said in the
// header; a model that is not loaded is never asked, so never loaded to count).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MockAgent } from 'undici';
import { GatewayError } from '#src/core/errors.ts';
import type { NodeView } from '#src/nodes/index.ts';
import { countHere, gatewayCounts, type AnsweredHere } from '#src/proxy/request/gateway-count.ts';
import { node, NOW, snapshotOf, type NodeOptions } from '#test/fixtures/builders.ts';

const COUNT = '/v1/messages/count_tokens' as const;

function nodeOf(name: string, options: NodeOptions & { version?: string; lacking?: Record<string, string> }): NodeView {
  const base = node(name, options);
  const server = options.version === undefined ? undefined : { version: options.version };
  return {
    ...base,
    capacity: { ...base.capacity, server },
    ...(options.lacking === undefined ? {} : { lackingEndpoints: options.lacking }),
  };
}

test('who counts: the gateway only where some node lists the model and no live node that lists it counts natively', () => {
  const table: readonly (readonly [string, readonly NodeView[], boolean])[] = [
    ['one openai node', [nodeOf('o', { kind: 'openai', models: ['m'] })], true],
    ['one vllm node (current: it serves count_tokens)', [nodeOf('v', { kind: 'vllm', models: ['m'] })], false],
    [
      'an openai and a vllm node',
      [nodeOf('o', { kind: 'openai', models: ['m'] }), nodeOf('v', { kind: 'vllm', models: ['m'] })],
      false,
    ],
    [
      'the native node is dead',
      [nodeOf('o', { kind: 'openai', models: ['m'] }), nodeOf('v', { kind: 'vllm', models: ['m'], health: 'dead' })],
      true,
    ],
    [
      'the native node lists another model',
      [nodeOf('o', { kind: 'openai', models: ['m'] }), nodeOf('v', { kind: 'vllm', models: ['x'] })],
      true,
    ],
    ['no node lists the model (routing answers 404)', [nodeOf('v', { kind: 'openai', models: ['x'] })], false],
    ['no node at all', [], false],
    ['a llama-server build before b7187', [nodeOf('l', { kind: 'llamacpp', models: ['m'], version: 'b7000-abc' })], true],
    ['a llama-server build from b7187', [nodeOf('l', { kind: 'llamacpp', models: ['m'], version: 'b7187-abc' })], false],
    ['an Ollama before 0.14.0 (no Messages routes)', [nodeOf('l', { kind: 'ollama', models: ['m'], version: '0.13.5' })], false],
    [
      'a node that answered count_tokens with a route-level 404',
      [nodeOf('v', { kind: 'vllm', models: ['m'], lacking: { [COUNT]: 'Not Found' } })],
      true,
    ],
  ];
  for (const [what, nodes, expected] of table) assert.equal(gatewayCounts(nodes, 'm', COUNT), expected, what);
});

function depsOf(nodes: readonly NodeView[], agent: MockAgent) {
  return {
    fleet: { views: () => nodes, snapshot: () => snapshotOf(nodes) },
    pools: { get: () => agent },
    clock: { now: () => NOW },
  };
}

const request = (json: Record<string, unknown>) => ({
  endpoint: COUNT,
  resolved: { model: 'm', json: { model: 'm', ...json } },
  settings: { tokenizeTimeoutMs: 1000 },
  signal: new AbortController().signal,
});

const BODY = { system: 'be brief', messages: [{ role: 'user', content: 'hello there' }] };
/** The proven upper bound of BODY: its bytes (8 + 11), plus the template's 16 + 8 a message (two: the system counts). */
const BODY_UPPER = 8 + 11 + 16 + 16;

function closedAgent(): MockAgent {
  const agent = new MockAgent();
  agent.disableNetConnect();
  return agent;
}

test('a node without a tokenizer: the upper bound, at once (no promise), nothing asked', () => {
  const answered = countHere(depsOf([nodeOf('o', { kind: 'openai', models: ['m'] })], closedAgent()), request(BODY));
  assert.ok(answered !== undefined && !(answered instanceof Promise) && !(answered instanceof GatewayError));
  assert.equal(answered.status, 200);
  assert.deepEqual(JSON.parse(answered.body), { input_tokens: BODY_UPPER });
  assert.deepEqual(answered.headers, { 'x-switchyard-count': 'bound' });
});

test('a model listed but not loaded (a router’s unloaded model) is never asked to count: the bound', () => {
  const router = nodeOf('r', { kind: 'llamacpp', onDemand: { m: 'unloaded' }, version: 'b7000-abc' });
  const answered = countHere(depsOf([router], closedAgent()), request(BODY));
  assert.ok(answered !== undefined && !(answered instanceof Promise) && !(answered instanceof GatewayError));
  assert.equal(answered.headers['x-switchyard-count'], 'bound');
});

test('a node with the model loaded and a tokenizer counts it: its count plus the template, named in the headers', async () => {
  const agent = closedAgent();
  agent
    .get('http://127.0.0.1:1')
    .intercept({ path: '/l/tokenize?autoload=false', method: 'POST' })
    .reply(200, { tokens: [1, 2, 3, 4, 5] });
  const answered = countHere(
    depsOf([nodeOf('l', { kind: 'llamacpp', models: ['m'], version: 'b7000-abc' })], agent),
    request(BODY),
  );
  assert.ok(answered instanceof Promise);
  const answer = (await answered) as AnsweredHere;
  assert.deepEqual(JSON.parse(answer.body), { input_tokens: 5 + 16 + 16 });
  assert.deepEqual(answer.headers, { 'x-switchyard-count': 'tokenizer', 'x-switchyard-count-node': 'l' });
  await agent.close();
});

test('a tokenizer that fails: the bound, said so', async () => {
  const agent = closedAgent();
  agent.get('http://127.0.0.1:1').intercept({ path: '/l/tokenize?autoload=false', method: 'POST' }).reply(500, 'boom');
  const answered = countHere(
    depsOf([nodeOf('l', { kind: 'llamacpp', models: ['m'], version: 'b7000-abc' })], agent),
    request(BODY),
  );
  const answer = (await answered) as AnsweredHere;
  assert.deepEqual(JSON.parse(answer.body), { input_tokens: BODY_UPPER });
  assert.equal(answer.headers['x-switchyard-count'], 'bound');
  await agent.close();
});

test('tools count too; a body without messages is refused naming the field; a native node leaves it to routing', () => {
  const deps = depsOf([nodeOf('o', { kind: 'openai', models: ['m'] })], closedAgent());
  const tools = [{ name: 'f', input_schema: { type: 'object' } }];
  const withTools = countHere(deps, request({ ...BODY, tools })) as AnsweredHere;
  assert.deepEqual(JSON.parse(withTools.body), { input_tokens: BODY_UPPER + JSON.stringify(tools).length });
  const refused = countHere(deps, request({ system: 'x' }));
  assert.ok(refused instanceof GatewayError);
  assert.equal(refused.status, 400);
  assert.equal(refused.param, 'messages');
  assert.equal(countHere(depsOf([nodeOf('v', { kind: 'vllm', models: ['m'] })], closedAgent()), request(BODY)), undefined);
});

test('a count never loads a model: a serving router that lists it unloaded or asleep makes the gateway count', () => {
  const loaded = nodeOf('a', { kind: 'llamacpp', models: ['m'], version: 'b10587-abc' });
  const unloaded = nodeOf('b', { kind: 'llamacpp', onDemand: { m: 'unloaded' }, version: 'b10587-abc' });
  const sleeping = nodeOf('c', { kind: 'llamacpp', onDemand: { m: 'sleeping' }, version: 'b10587-abc' });
  const table: readonly (readonly [string, readonly NodeView[], boolean])[] = [
    ['loaded on the only serving node: the node counts', [loaded], false],
    ['unloaded on the only serving node', [unloaded], true],
    ['loaded on one, unloaded on another: routing might pick either', [loaded, unloaded], true],
    ['sleeping (a request wakes it: a load of its own)', [sleeping], true],
    ['unloaded, but the node is dead', [loaded, { ...unloaded, health: { ...unloaded.health, status: 'dead' } }], false],
  ];
  const counts = ['/v1/chat/completions/input_tokens', '/v1/responses/input_tokens', COUNT] as const;
  for (const [what, nodes, here] of table) {
    for (const endpoint of counts) assert.equal(gatewayCounts(nodes, 'm', endpoint), here, `${endpoint}: ${what}`);
  }
});

test('the OpenAI-style counts answer with their object, and refuse a body without what they count', () => {
  const router = nodeOf('r', { kind: 'llamacpp', onDemand: { m: 'unloaded' }, version: 'b10587-abc' });
  const deps = depsOf([router], closedAgent());
  const chat = countHere(deps, { ...request(BODY), endpoint: '/v1/chat/completions/input_tokens' }) as AnsweredHere;
  assert.equal(JSON.parse(chat.body).object, 'response.input_tokens');
  const responses = countHere(deps, {
    ...request({ model: 'm', input: 'one two three' }),
    endpoint: '/v1/responses/input_tokens',
  }) as AnsweredHere;
  assert.equal(JSON.parse(responses.body).object, 'response.input_tokens');
  assert.ok(JSON.parse(responses.body).input_tokens >= 3);
  const refused = countHere(deps, { ...request({ model: 'm' }), endpoint: '/v1/responses/input_tokens' });
  assert.ok(refused instanceof GatewayError && refused.param === 'input');
});
