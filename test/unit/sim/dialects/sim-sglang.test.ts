// Contract: an `sglang` sim node answers like SGLang's HTTP server (PROTOCOLS.md §4).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { countTokens, startSimNode, type SimNode } from '#src/sim/index.ts';
import { call, chat, json, list, record, sseData } from '#test/unit/sim/dialects/sim-http.ts';

describe('sglang sim node', () => {
  let node: SimNode;
  before(async () => {
    node = await startSimNode({
      kind: 'sglang',
      models: ['qwen2.5-7b'],
      contextTokens: 100,
      slots: 8,
      ttftMs: 2,
      tokensPerSecond: 2000,
    });
  });
  after(() => node.close());

  test('lists exactly one card with owned_by sglang and max_model_len', async () => {
    const answer = await call(node.url, 'GET', '/v1/models');
    const body = record(json(answer));
    assert.deepEqual(Object.keys(body), ['object', 'data']);
    const [card] = list(body['data']).map(record);
    assert.deepEqual(Object.keys(card ?? {}), ['id', 'object', 'created', 'owned_by', 'root', 'max_model_len']);
    assert.deepEqual(
      { ...card, created: 0 },
      { id: 'qwen2.5-7b', object: 'model', created: 0, owned_by: 'sglang', root: 'qwen2.5-7b', max_model_len: 100 },
    );
  });

  test('answers /v1/models/{id} with the card and an unknown id with model_not_found', async () => {
    assert.equal(record(json(await call(node.url, 'GET', '/v1/models/qwen2.5-7b')))['id'], 'qwen2.5-7b');
    const missing = await call(node.url, 'GET', '/v1/models/nope');
    assert.equal(missing.status, 404);
    assert.equal(
      missing.text,
      '{"error":{"message":"The model \'nope\' does not exist","type":"invalid_request_error","param":"model","code":"model_not_found"}}',
    );
  });

  test('answers /health and /health_generate with an empty 200', async () => {
    for (const path of ['/health', '/health_generate']) {
      const answer = await call(node.url, 'GET', path);
      assert.equal(answer.status, 200);
      assert.equal(answer.text, '');
    }
  });

  test('reports model and server info', async () => {
    const info = record(json(await call(node.url, 'GET', '/get_model_info')));
    assert.deepEqual(Object.keys(info), [
      'model_path',
      'tokenizer_path',
      'is_generation',
      'preferred_sampling_params',
      'weight_version',
    ]);
    const server = record(json(await call(node.url, 'GET', '/get_server_info')));
    assert.equal(server['context_length'], 100);
    assert.equal(server['served_model_name'], 'qwen2.5-7b');
    assert.equal(server['max_running_requests'], 8);
    assert.equal(server['port'], node.port);
    assert.ok(Array.isArray(server['internal_states']));
  });

  test('tokenizes on /v1/tokenize and /tokenize', async () => {
    for (const path of ['/v1/tokenize', '/tokenize']) {
      const body = record(json(await call(node.url, 'POST', path, { body: { prompt: 'Hello world' } })));
      assert.deepEqual(Object.keys(body), ['tokens', 'count', 'max_model_len']);
      assert.equal(body['count'], countTokens('Hello world'));
    }
  });

  test('serves chats under its own name whatever the request calls the model', async () => {
    const body = record(
      json(await call(node.url, 'POST', '/v1/chat/completions', { body: chat('hi', { model: 'anything', max_tokens: 2 }) })),
    );
    assert.match(String(body['id']), /^[0-9a-f]{32}$/);
    assert.equal(body['model'], 'qwen2.5-7b');
    const [choice] = list(body['choices']).map(record);
    assert.deepEqual(Object.keys(choice ?? {}), ['index', 'message', 'logprobs', 'finish_reason', 'matched_stop']);
    assert.deepEqual(body['usage'], { prompt_tokens: 8, total_tokens: 10, completion_tokens: 2, prompt_tokens_details: null });
    const events = sseData(
      (await call(node.url, 'POST', '/v1/chat/completions', { body: chat('hi', { max_tokens: 1, stream: true }) })).text,
    );
    assert.equal(events.at(-1), '[DONE]');
    // It writes every field of a chunk: `"usage":null` whether asked for usage or not.
    for (const chunk of events.slice(0, -1)) assert.equal(record(chunk)['usage'], null);
  });

  test('rejects an input reaching the context length with its flat 400', async () => {
    const answer = await call(node.url, 'POST', '/v1/chat/completions', { body: chat('x '.repeat(93)) });
    assert.equal(answer.status, 400);
    assert.equal(
      answer.text,
      '{"object":"error","message":"The input (100 tokens) is longer than the model\'s context length (100 tokens).","type":"BadRequestError","param":null,"code":400}',
    );
  });

  test('rejects input plus max_tokens reaching the context length with its second message', async () => {
    const answer = await call(node.url, 'POST', '/v1/chat/completions', { body: chat('x '.repeat(43), { max_tokens: 50 }) });
    assert.equal(answer.status, 400);
    const body = record(json(answer));
    assert.deepEqual(Object.keys(body), ['object', 'message', 'type', 'param', 'code']);
    assert.equal(
      body['message'],
      "Requested token count exceeds the model's maximum context length of 100 tokens. You requested a total of 100 tokens: 50 tokens from the input messages and 50 tokens for the completion. Please reduce the number of tokens in the input messages or the completion to fit within the limit.",
    );
  });

  test('answers malformed JSON with the flat "Bad Request" body and unknown routes with FastAPI\'s', async () => {
    const malformed = await call(node.url, 'POST', '/v1/chat/completions', { body: '{' });
    assert.equal(malformed.status, 400);
    assert.equal(record(json(malformed))['type'], 'Bad Request');
    assert.equal((await call(node.url, 'GET', '/nope')).text, '{"detail":"Not Found"}');
  });

  test('exposes sglang: metrics labelled with model_name', async () => {
    const answer = await call(node.url, 'GET', '/metrics');
    assert.equal(answer.status, 200);
    for (const name of ['num_running_reqs', 'num_queue_reqs', 'num_used_tokens', 'token_usage', 'gen_throughput']) {
      assert.match(answer.text, new RegExp(`^sglang:${name}\\{model_name="qwen2\\.5-7b"\\} `, 'm'));
    }
  });
});

describe('sglang sim node options', () => {
  test('without metrics has no /metrics route, and an api_key guards everything but health', async () => {
    const node = await startSimNode({ kind: 'sglang', models: ['m'], metrics: false, apiKey: 'k', ttftMs: 1 });
    try {
      assert.equal((await call(node.url, 'GET', '/metrics')).status, 404);
      assert.equal((await call(node.url, 'GET', '/health')).status, 200);
      const denied = await call(node.url, 'GET', '/v1/models');
      assert.equal(denied.status, 401);
      assert.equal(denied.text, '{"error":"Unauthorized"}');
      assert.equal((await call(node.url, 'GET', '/v1/models', { headers: { authorization: 'Bearer k' } })).status, 200);
    } finally {
      await node.close();
    }
  });
});
