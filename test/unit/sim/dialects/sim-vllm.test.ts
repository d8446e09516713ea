// Contract: a `vllm` sim node answers like vLLM's OpenAI server (PROTOCOLS.md §2).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { chatPromptTokens, countTokens, startSimNode, type SimNode } from '#src/sim/index.ts';
import { call, chat, json, keysOf, list, record, sseData } from '#test/unit/sim/dialects/sim-http.ts';

describe('vllm sim node', () => {
  let node: SimNode;
  before(async () => {
    node = await startSimNode({
      kind: 'vllm',
      models: ['meta-llama/Llama-3.1-8B-Instruct', { id: 'small', contextTokens: 100 }],
      contextTokens: 8192,
      ttftMs: 2,
      tokensPerSecond: 2000,
    });
  });
  after(() => node.close());

  test('lists one card per served model with max_model_len and a permission entry', async () => {
    const answer = await call(node.url, 'GET', '/v1/models');
    assert.equal(answer.status, 200);
    const body = record(json(answer));
    assert.deepEqual(Object.keys(body), ['object', 'data']);
    const [first, second] = list(body['data']).map(record);
    assert.deepEqual(Object.keys(first ?? {}), [
      'id',
      'object',
      'created',
      'owned_by',
      'root',
      'parent',
      'max_model_len',
      'permission',
    ]);
    assert.equal(first?.['owned_by'], 'vllm');
    assert.equal(first?.['parent'], null);
    assert.equal(first?.['max_model_len'], 8192);
    assert.equal(second?.['max_model_len'], 100);
    const [permission] = list(first?.['permission']);
    assert.match(String(record(permission)['id']), /^modelperm-[0-9a-f]{32}$/);
    assert.deepEqual(node.modelIds(), ['meta-llama/Llama-3.1-8B-Instruct', 'small']);
  });

  test('answers /health and /ping with an empty 200, and /version, /load', async () => {
    for (const path of ['/health', '/ping']) {
      const answer = await call(node.url, 'GET', path);
      assert.equal(answer.status, 200);
      assert.equal(answer.text, '');
    }
    assert.equal((await call(node.url, 'POST', '/ping')).status, 200);
    assert.match((await call(node.url, 'GET', '/version')).text, /^\{"version":"\d+\.\d+\.\d+"\}$/);
    assert.equal((await call(node.url, 'GET', '/load')).text, '{"server_load":0}');
  });

  test('tokenizes a prompt or chat messages with count and max_model_len', async () => {
    const prompt = record(json(await call(node.url, 'POST', '/tokenize', { body: { model: 'small', prompt: 'Hello world' } })));
    assert.deepEqual(Object.keys(prompt), ['count', 'max_model_len', 'tokens', 'token_strs']);
    assert.equal(prompt['count'], countTokens('Hello world'));
    assert.equal(prompt['max_model_len'], 100);
    assert.equal(prompt['token_strs'], null);
    const messages = [{ role: 'user', content: 'Hello world' }];
    const chatTokens = record(json(await call(node.url, 'POST', '/tokenize', { body: { messages } })));
    assert.equal(chatTokens['count'], chatPromptTokens(messages));
    assert.equal(list(chatTokens['tokens']).length, chatPromptTokens(messages));
  });

  test('answers a chat with a chatcmpl- uuid id, pydantic key order and usage', async () => {
    const request = chat('Hello there', { model: 'small', max_tokens: 3 });
    const body = record(json(await call(node.url, 'POST', '/v1/chat/completions', { body: request })));
    assert.match(String(body['id']), /^chatcmpl-[0-9a-f]{32}$/);
    assert.deepEqual(Object.keys(body).slice(0, 5), ['id', 'object', 'created', 'model', 'choices']);
    assert.equal(body['model'], 'small');
    const [choice] = list(body['choices']).map(record);
    assert.deepEqual(Object.keys(choice ?? {}), ['index', 'message', 'logprobs', 'finish_reason', 'stop_reason']);
    assert.equal(choice?.['finish_reason'], 'length');
    const prompt = chatPromptTokens(request['messages']);
    assert.deepEqual(body['usage'], {
      prompt_tokens: prompt,
      total_tokens: prompt + 3,
      completion_tokens: 3,
      prompt_tokens_details: null,
    });
  });

  test('streams chunks with a role delta first, usage only with include_usage, then [DONE]', async () => {
    const plain = sseData(
      (await call(node.url, 'POST', '/v1/chat/completions', { body: chat('hi', { stream: true, max_tokens: 2 }) })).text,
    );
    assert.equal(plain.length, 5);
    assert.deepEqual(keysOf(plain[0]), ['id', 'object', 'created', 'model', 'choices']);
    assert.deepEqual(record(list(record(plain[0])['choices'])[0])['delta'], { role: 'assistant', content: '' });
    assert.equal(record(list(record(plain[3])['choices'])[0])['finish_reason'], 'length');
    assert.equal(plain[4], '[DONE]');
    assert.doesNotMatch(JSON.stringify(plain), /usage/);
    const withUsage = sseData(
      (
        await call(node.url, 'POST', '/v1/chat/completions', {
          body: chat('hi', { stream: true, max_tokens: 2, stream_options: { include_usage: true } }),
        })
      ).text,
    );
    const usage = record(withUsage.at(-2));
    assert.deepEqual(usage['choices'], []);
    assert.deepEqual(usage['usage'], { prompt_tokens: 8, total_tokens: 10, completion_tokens: 2 });
    assert.equal(withUsage.at(-1), '[DONE]');
    // Asked, every other chunk states `"usage":null` (OpenAI's, and vLLM's before 0.6).
    for (const chunk of withUsage.slice(0, -2)) assert.equal(record(chunk)['usage'], null);
    assert.deepEqual(keysOf(withUsage[0]), ['id', 'object', 'created', 'model', 'choices', 'usage']);
  });

  test('answers completions, embeddings and responses', async () => {
    const completion = record(json(await call(node.url, 'POST', '/v1/completions', { body: { prompt: 'x', max_tokens: 1 } })));
    assert.match(String(completion['id']), /^cmpl-[0-9a-f]{32}$/);
    assert.equal(completion['object'], 'text_completion');
    const embeddings = record(json(await call(node.url, 'POST', '/v1/embeddings', { body: { model: 'small', input: 'hello' } })));
    assert.match(String(embeddings['id']), /^embd-[0-9a-f]{32}$/);
    assert.deepEqual(keysOf(list(embeddings['data'])[0]), ['index', 'object', 'embedding']);
    const response = record(json(await call(node.url, 'POST', '/v1/responses', { body: { input: 'hi' } })));
    assert.equal(response['status'], 'completed');
  });

  test('rejects a request over max_model_len with a 400 BadRequestError on input_tokens', async () => {
    const answer = await call(node.url, 'POST', '/v1/chat/completions', {
      body: chat('x '.repeat(50), { model: 'small', max_tokens: 50 }),
    });
    assert.equal(answer.status, 400);
    const error = record(record(json(answer))['error']);
    assert.deepEqual(Object.keys(error), ['message', 'type', 'param', 'code']);
    assert.equal(error['type'], 'BadRequestError');
    assert.equal(error['param'], 'input_tokens');
    assert.equal(error['code'], 400);
    assert.match(
      String(error['message']),
      /maximum context length is 100 tokens\. However, you requested 50 output tokens and your prompt contains at least 57 input tokens/,
    );
    const fits = await call(node.url, 'POST', '/v1/chat/completions', {
      body: chat('x '.repeat(50), { model: 'small', max_tokens: 43 }),
    });
    assert.equal(fits.status, 200, 'prompt + max_tokens == max_model_len is accepted');
  });

  test('answers an unknown model with 404 NotFoundError', async () => {
    const answer = await call(node.url, 'POST', '/v1/chat/completions', { body: chat('hi', { model: 'gpt-4' }) });
    assert.equal(answer.status, 404);
    assert.equal(
      answer.text,
      '{"error":{"message":"The model `gpt-4` does not exist.","type":"NotFoundError","param":"model","code":404}}',
    );
  });

  test('answers malformed JSON and missing fields with 400s, unknown routes with FastAPI bodies', async () => {
    const malformed = await call(node.url, 'POST', '/v1/chat/completions', { body: '{"model": x' });
    assert.equal(malformed.status, 400);
    assert.match(malformed.text, /^\{"error":\{"message":"\[\{'type': 'json_invalid'/);
    const missing = await call(node.url, 'POST', '/v1/chat/completions', { body: { model: 'small' } });
    assert.equal(missing.status, 400);
    assert.match(missing.text, /'loc': \('body', 'messages'\)/);
    assert.equal((await call(node.url, 'GET', '/nothing')).text, '{"detail":"Not Found"}');
    const wrongMethod = await call(node.url, 'GET', '/v1/chat/completions');
    assert.equal(wrongMethod.status, 405);
    assert.equal(wrongMethod.text, '{"detail":"Method Not Allowed"}');
  });

  test('exposes vllm: metrics labelled with model_name', async () => {
    await call(node.url, 'POST', '/v1/completions', { body: { model: 'small', prompt: 'abc', max_tokens: 2 } });
    const answer = await call(node.url, 'GET', '/metrics');
    assert.equal(answer.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
    assert.match(answer.text, /^vllm:num_requests_running\{model_name="small",engine="0"\} 0$/m);
    assert.match(answer.text, /^vllm:num_requests_waiting\{model_name="small",engine="0"\} 0$/m);
    assert.match(answer.text, /^vllm:kv_cache_usage_perc\{model_name="small",engine="0"\} /m);
    assert.match(answer.text, /^vllm:generation_tokens_total\{model_name="small",engine="0"\} [1-9]/m);
  });
});

describe('vllm sim node with an api_key', () => {
  test('answers /v1 paths without the key with {"error":"Unauthorized"} and leaves /health open', async () => {
    const node = await startSimNode({ kind: 'vllm', models: ['m'], apiKey: 'k', ttftMs: 1 });
    try {
      const denied = await call(node.url, 'GET', '/v1/models');
      assert.equal(denied.status, 401);
      assert.equal(denied.text, '{"error":"Unauthorized"}');
      assert.equal((await call(node.url, 'GET', '/v1/models', { headers: { authorization: 'Bearer k' } })).status, 200);
      assert.equal((await call(node.url, 'GET', '/health')).status, 200);
    } finally {
      await node.close();
    }
  });
});
