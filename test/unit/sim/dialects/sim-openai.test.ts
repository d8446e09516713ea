// Contract: the `openai` sim is a generic OpenAI-compatible server — /v1/models (and one model by
// id), chat completions, completions and embeddings in OpenAI's shapes and error wording, tool calls
// on chat — and nothing else: /v1/responses and /v1/messages are a route-level 404, as on a server
// that lacks them, so a gateway must translate for agents that speak those.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startSimNode, type SimNode } from '#src/sim/index.ts';
import { call, chat, json, list, record, sseData } from '#test/unit/sim/dialects/sim-http.ts';

describe('the openai sim kind', () => {
  let node: SimNode;
  before(async () => {
    node = await startSimNode({
      kind: 'openai',
      models: [{ id: 'gpt-oss-20b', aliases: ['oss'] }, 'embedder'],
      contextTokens: 64,
      ttftMs: 1,
      tokensPerSecond: 5000,
      answers: 'natural',
    });
  });
  after(() => node.close());

  test('lists its models in the standard shape, and answers one by id', async () => {
    const listing = record(json(await call(node.url, 'GET', '/v1/models')));
    assert.equal(listing['object'], 'list');
    const cards = list(listing['data']).map(record);
    assert.deepEqual(
      cards.map((c) => c['id']),
      ['gpt-oss-20b', 'oss', 'embedder'],
    );
    assert.deepEqual(Object.keys(cards[0] ?? {}), ['id', 'object', 'created', 'owned_by']);
    const one = await call(node.url, 'GET', '/v1/models/oss');
    assert.equal(one.status, 200);
    assert.equal(record(json(one))['id'], 'oss');
    const missing = await call(node.url, 'GET', '/v1/models/nope');
    assert.equal(missing.status, 404);
    assert.equal(record(record(json(missing))['error'])['code'], 'model_not_found');
  });

  test('chat, completions (streamed too) and embeddings answer', async () => {
    const answer = record(json(await call(node.url, 'POST', '/v1/chat/completions', { body: chat('Hello!', { model: 'oss' }) })));
    assert.equal(answer['object'], 'chat.completion');
    assert.equal(answer['model'], 'gpt-oss-20b');
    const choice = record(list(answer['choices'])[0]);
    assert.equal(choice['finish_reason'], 'stop');
    assert.match(String(record(choice['message'])['content']), /^You said "Hello!"/);
    const streamed = await call(node.url, 'POST', '/v1/completions', {
      body: { model: 'gpt-oss-20b', prompt: 'Once', stream: true, max_tokens: 4 },
    });
    const chunks = sseData(streamed.text);
    assert.equal(chunks.at(-1), '[DONE]');
    assert.equal(record(list(record(chunks.at(-2))['choices'])[0])['finish_reason'], 'length');
    const embeddings = record(
      json(await call(node.url, 'POST', '/v1/embeddings', { body: { model: 'embedder', input: ['a', 'b'] } })),
    );
    assert.equal(list(embeddings['data']).length, 2);
  });

  test('chat with tools answers a tool call', async () => {
    const tools = [{ type: 'function', function: { name: 'ls', parameters: { type: 'object', properties: {} } } }];
    const answer = record(
      json(await call(node.url, 'POST', '/v1/chat/completions', { body: chat('list files', { model: 'oss', tools }) })),
    );
    const choice = record(list(answer['choices'])[0]);
    assert.equal(choice['finish_reason'], 'tool_calls');
    const [toolCall] = list(record(choice['message'])['tool_calls']).map(record);
    assert.deepEqual(record(toolCall?.['function']), { name: 'ls', arguments: '{}' });
  });

  test('/v1/responses, /v1/messages and any other route are a route-level 404', async () => {
    for (const path of ['/v1/responses', '/v1/messages', '/v1/messages/count_tokens', '/metrics', '/tokenize']) {
      const answer = await call(node.url, 'POST', path, { body: { model: 'oss', input: 'hi', messages: [] } });
      assert.deepEqual([answer.status, answer.text], [404, '{"detail":"Not Found"}'], path);
    }
  });

  test("OpenAI's errors: unknown model, overlong prompt, missing field, bad JSON", async () => {
    const unknown = await call(node.url, 'POST', '/v1/chat/completions', { body: chat('hi', { model: 'nope' }) });
    assert.equal(unknown.status, 404);
    assert.match(String(record(record(json(unknown))['error'])['message']), /^The model `nope` does not exist/);
    const overlong = await call(node.url, 'POST', '/v1/chat/completions', { body: chat('word '.repeat(300), { model: 'oss' }) });
    assert.equal(overlong.status, 400);
    const error = record(record(json(overlong))['error']);
    assert.equal(error['code'], 'context_length_exceeded');
    assert.match(String(error['message']), /^This model's maximum context length is 64 tokens/);
    const missing = await call(node.url, 'POST', '/v1/chat/completions', { body: { model: 'oss' } });
    assert.deepEqual([missing.status, record(record(json(missing))['error'])['param']], [400, 'messages']);
    const bad = await call(node.url, 'POST', '/v1/chat/completions', { body: '{nope' });
    assert.deepEqual([bad.status, record(record(json(bad))['error'])['type']], [400, 'invalid_request_error']);
  });

  test('an API key is required on every route when set', async () => {
    const locked = await startSimNode({ kind: 'openai', models: ['m'], apiKey: 'k' });
    try {
      assert.equal((await call(locked.url, 'GET', '/v1/models')).status, 401);
      assert.equal((await call(locked.url, 'GET', '/v1/models', { headers: { authorization: 'Bearer k' } })).status, 200);
    } finally {
      await locked.close();
    }
  });
});
