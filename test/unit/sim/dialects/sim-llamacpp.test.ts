// Contract: a `llamacpp` sim node answers like a single-model llama-server (PROTOCOLS.md §1, §7).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { systemClock, type Clock } from '#src/core/clock.ts';
import { chatPromptTokens, countTokens, startSimNode, type SimNode, type SimNodeSpec } from '#src/sim/index.ts';
import { call, chat, json, keysOf, list, record, sseData, waitUntil } from '#test/unit/sim/dialects/sim-http.ts';

const CHATCMPL_ID = /^chatcmpl-[0-9A-Za-z]{32}$/;
const TIMINGS_KEYS = [
  'cache_n',
  'prompt_n',
  'prompt_ms',
  'prompt_per_token_ms',
  'prompt_per_second',
  'predicted_n',
  'predicted_ms',
  'predicted_per_token_ms',
  'predicted_per_second',
];
const fast: Partial<SimNodeSpec> = { ttftMs: 2, tokensPerSecond: 2000 };

function llama(extra: Partial<SimNodeSpec> = {}): SimNodeSpec {
  return { kind: 'llamacpp', models: ['tiny-llama'], contextTokens: 512, slots: 2, ...fast, ...extra };
}

describe('llamacpp sim node', () => {
  let node: SimNode;
  const fixedClock: Clock = { ...systemClock, now: () => 1_796_009_474_000 };
  before(async () => {
    node = await startSimNode(llama(), { clock: fixedClock });
  });
  after(() => node.close());

  test('lists its model in the Ollama-style and OpenAI-style arrays, identically on /models', async () => {
    const answer = await call(node.url, 'GET', '/v1/models');
    assert.equal(answer.status, 200);
    assert.equal(answer.headers['server'], 'llama.cpp');
    assert.equal(answer.headers['content-type'], 'application/json; charset=utf-8');
    const body = record(json(answer));
    assert.deepEqual(Object.keys(body), ['models', 'object', 'data']);
    const [entry] = list(body['models']);
    assert.deepEqual(keysOf(entry), [
      'name',
      'model',
      'modified_at',
      'size',
      'digest',
      'type',
      'description',
      'tags',
      'capabilities',
      'parameters',
      'details',
    ]);
    const [card] = list(body['data']);
    assert.deepEqual(keysOf(card), ['id', 'aliases', 'tags', 'object', 'created', 'owned_by', 'meta']);
    assert.deepEqual(
      { ...record(card), meta: undefined },
      {
        id: 'tiny-llama',
        aliases: ['tiny-llama'],
        tags: [],
        object: 'model',
        created: 1_796_009_474,
        owned_by: 'llamacpp',
        meta: undefined,
      },
    );
    const meta = record(record(card)['meta']);
    assert.deepEqual(Object.keys(meta), ['vocab_type', 'n_vocab', 'n_ctx', 'n_ctx_train', 'n_embd', 'n_params', 'size', 'ftype']);
    assert.equal(meta['n_ctx'], 512);
    assert.equal((await call(node.url, 'GET', '/models')).text, answer.text);
  });

  test('answers health with {"status":"ok"} on /health and /v1/health', async () => {
    for (const path of ['/health', '/v1/health']) {
      const answer = await call(node.url, 'GET', path);
      assert.equal(answer.status, 200);
      assert.equal(answer.text, '{"status":"ok"}');
    }
  });

  test('serves /props in llama.cpp key order with the per-slot n_ctx and total_slots', async () => {
    const props = record(json(await call(node.url, 'GET', '/props')));
    assert.deepEqual(Object.keys(props), [
      'default_generation_settings',
      'total_slots',
      'model_alias',
      'model_ftype',
      'model_path',
      'modalities',
      'media_marker',
      'endpoint_slots',
      'endpoint_props',
      'endpoint_metrics',
      'ui',
      'ui_settings',
      'chat_template',
      'chat_template_caps',
      'bos_token',
      'eos_token',
      'build_info',
      'is_sleeping',
      'cors_proxy_enabled',
    ]);
    assert.equal(record(props['default_generation_settings'])['n_ctx'], 512);
    assert.equal(props['total_slots'], 2);
    assert.equal(props['model_alias'], 'tiny-llama');
  });

  test('lists one /slots entry per slot with the per-slot n_ctx', async () => {
    const slots = list(json(await call(node.url, 'GET', '/slots')));
    assert.equal(slots.length, 2);
    assert.deepEqual(Object.keys(record(slots[1])).slice(0, 4), ['id', 'n_ctx', 'speculative', 'is_processing']);
    assert.deepEqual(
      slots.map((s) => record(s)['n_ctx']),
      [512, 512],
    );
  });

  test('exposes llamacpp: metrics as Prometheus text with Process-Start-Time-Unix', async () => {
    const answer = await call(node.url, 'GET', '/metrics');
    assert.equal(answer.status, 200);
    assert.equal(answer.headers['content-type'], 'text/plain; version=0.0.4');
    assert.equal(answer.headers['process-start-time-unix'], '1796009474');
    for (const name of [
      'prompt_tokens_total',
      'tokens_predicted_total',
      'requests_processing',
      'requests_deferred',
      'n_decode_total',
    ]) {
      assert.match(answer.text, new RegExp(`^llamacpp:${name} \\d`, 'm'));
    }
    assert.doesNotMatch(answer.text, /kv_cache_usage_ratio/);
  });

  test('tokenizes with the sim tokenizer, with pieces on request, and gives [] without content', async () => {
    const text = 'Hello world, this is a test.';
    const tokens = list(record(json(await call(node.url, 'POST', '/tokenize', { body: { content: text } })))['tokens']);
    assert.equal(tokens.length, countTokens(text));
    assert.ok(tokens.every((t) => typeof t === 'number'));
    const pieces = list(
      record(json(await call(node.url, 'POST', '/tokenize', { body: { content: text, with_pieces: true } })))['tokens'],
    );
    assert.deepEqual(keysOf(pieces[0]), ['id', 'piece']);
    assert.equal(pieces.map((p) => record(p)['piece']).join(''), text);
    assert.equal((await call(node.url, 'POST', '/tokenize', { body: {} })).text, '{"tokens":[]}');
  });

  test('answers a chat in llama.cpp key order with usage, timings and 16 tokens ending in "stop"', async () => {
    const request = chat('Hello there, how are you?', { model: 'no-such-model' });
    const answer = await call(node.url, 'POST', '/v1/chat/completions', { body: request });
    assert.equal(answer.status, 200);
    assert.ok(answer.headers['content-length'] !== undefined);
    const body = record(json(answer));
    assert.deepEqual(Object.keys(body), [
      'choices',
      'created',
      'model',
      'system_fingerprint',
      'object',
      'usage',
      'id',
      'timings',
    ]);
    assert.match(String(body['id']), CHATCMPL_ID);
    assert.equal(body['model'], 'tiny-llama', 'the request model is ignored');
    assert.equal(body['object'], 'chat.completion');
    const [choice] = list(body['choices']);
    assert.deepEqual(keysOf(choice), ['finish_reason', 'index', 'message']);
    assert.equal(record(choice)['finish_reason'], 'stop');
    const prompt = chatPromptTokens(request['messages']);
    assert.deepEqual(body['usage'], {
      completion_tokens: 16,
      prompt_tokens: prompt,
      total_tokens: 16 + prompt,
      prompt_tokens_details: { cached_tokens: 0 },
    });
    assert.deepEqual(keysOf(body['timings']), TIMINGS_KEYS);
    assert.equal(countTokens(String(record(record(choice)['message'])['content'])), 16);
  });

  test('streams a chat as a role chunk, one chunk per token, a finish chunk with timings, then [DONE]', async () => {
    const answer = await call(node.url, 'POST', '/v1/chat/completions', { body: chat('hi', { stream: true, max_tokens: 3 }) });
    assert.equal(answer.status, 200);
    assert.equal(answer.headers['content-type'], 'text/event-stream');
    assert.equal(answer.headers['x-accel-buffering'], 'no');
    assert.ok(
      answer.text
        .split('\n\n')
        .filter(Boolean)
        .every((block) => block.startsWith('data: ')),
    );
    const events = sseData(answer.text);
    assert.equal(events.length, 6);
    const [role, ...rest] = events;
    assert.deepEqual(keysOf(role), ['choices', 'created', 'id', 'model', 'system_fingerprint', 'object']);
    assert.deepEqual(record(role)['choices'], [{ finish_reason: null, index: 0, delta: { role: 'assistant', content: null } }]);
    const ids = new Set(events.slice(0, 5).map((e) => record(e)['id']));
    assert.equal(ids.size, 1);
    assert.deepEqual(
      rest.slice(0, 3).map((e) => record(list(record(e)['choices'])[0])['delta']),
      [{ content: ' The' }, { content: ' sim' }, { content: ' node' }],
    );
    const finish = record(rest[3]);
    assert.deepEqual(finish['choices'], [{ finish_reason: 'length', index: 0, delta: {} }]);
    assert.deepEqual(keysOf(finish['timings']), TIMINGS_KEYS);
    assert.equal(rest[4], '[DONE]');
    assert.doesNotMatch(answer.text, /"usage"/);
  });

  test('with include_usage ends with a usage chunk carrying the timings instead of the finish chunk', async () => {
    const answer = await call(node.url, 'POST', '/v1/chat/completions', {
      body: chat('hi', { stream: true, max_tokens: 2, stream_options: { include_usage: true } }),
    });
    const events = sseData(answer.text);
    const [finish, usage, done] = events.slice(-3);
    assert.equal('timings' in record(finish), false);
    assert.deepEqual(keysOf(usage), ['choices', 'created', 'id', 'model', 'system_fingerprint', 'object', 'usage', 'timings']);
    assert.deepEqual(record(usage)['choices'], []);
    assert.deepEqual(record(usage)['usage'], {
      completion_tokens: 2,
      prompt_tokens: 8,
      total_tokens: 10,
      prompt_tokens_details: { cached_tokens: 0 },
    });
    assert.equal(done, '[DONE]');
  });

  test('answers and streams completions with text_completion chunks; the last carries usage unasked', async () => {
    const plain = record(json(await call(node.url, 'POST', '/v1/completions', { body: { prompt: 'Once upon', max_tokens: 2 } })));
    assert.deepEqual(Object.keys(plain), [
      'choices',
      'created',
      'model',
      'system_fingerprint',
      'object',
      'usage',
      'id',
      'timings',
    ]);
    assert.match(String(plain['id']), CHATCMPL_ID);
    assert.deepEqual(plain['choices'], [{ text: ' The sim', index: 0, logprobs: null, finish_reason: 'length' }]);
    const events = sseData(
      (await call(node.url, 'POST', '/v1/completions', { body: { prompt: 'Once upon', max_tokens: 2, stream: true } })).text,
    );
    assert.equal(events.length, 4);
    assert.deepEqual(keysOf(events[0]), ['choices', 'created', 'model', 'system_fingerprint', 'object', 'id']);
    assert.deepEqual(keysOf(events[2]), [
      'choices',
      'created',
      'model',
      'system_fingerprint',
      'object',
      'usage',
      'id',
      'timings',
    ]);
    assert.deepEqual(record(events[2])['choices'], [{ text: '', index: 0, logprobs: null, finish_reason: 'length' }]);
    assert.equal(events[3], '[DONE]');
  });

  test('rejects a prompt of n_ctx tokens or more with exceed_context_size_error, before any SSE', async () => {
    const content = 'x '.repeat(512 - 7);
    assert.equal(chatPromptTokens([{ role: 'user', content }]), 512);
    for (const stream of [false, true]) {
      const answer = await call(node.url, 'POST', '/v1/chat/completions', { body: chat(content, { stream }) });
      assert.equal(answer.status, 400);
      assert.equal(answer.headers['content-type'], 'application/json; charset=utf-8');
      assert.equal(answer.headers['connection'], 'close');
      assert.equal(
        answer.text,
        '{"error":{"code":400,"message":"request (512 tokens) exceeds the available context size (512 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":512,"n_ctx":512}}',
      );
    }
  });

  test('stops generating at n_ctx with finish_reason "length"', async () => {
    const content = 'x '.repeat(481 - 7);
    const body = record(json(await call(node.url, 'POST', '/v1/chat/completions', { body: chat(content, { max_tokens: 100 }) })));
    assert.equal(record(list(body['choices'])[0])['finish_reason'], 'length');
    assert.deepEqual(body['usage'], {
      completion_tokens: 31,
      prompt_tokens: 481,
      total_tokens: 512,
      prompt_tokens_details: { cached_tokens: 0 },
    });
  });

  test('answers embeddings and responses', async () => {
    const embeddings = record(
      json(await call(node.url, 'POST', '/v1/embeddings', { body: { input: ['a b', 'c'], model: 'x' } })),
    );
    assert.deepEqual(Object.keys(embeddings), ['model', 'object', 'usage', 'data']);
    assert.equal(list(embeddings['data']).length, 2);
    assert.deepEqual(embeddings['usage'], { prompt_tokens: 3, total_tokens: 3 });
    const response = record(json(await call(node.url, 'POST', '/v1/responses', { body: { input: 'hi', max_output_tokens: 2 } })));
    assert.equal(response['object'], 'response');
    assert.deepEqual(response['usage'], { input_tokens: 8, output_tokens: 2, total_tokens: 10 });
    const stream = await call(node.url, 'POST', '/v1/responses', { body: { input: 'hi', stream: true } });
    assert.match(stream.text, /^event: response\.created\ndata: /);
    assert.match(stream.text, /event: response\.completed\n/);
    assert.doesNotMatch(stream.text, /\[DONE\]/);
  });

  test('answers malformed JSON with a 500 parse error and a chat without messages with a 400', async () => {
    const malformed = await call(node.url, 'POST', '/v1/chat/completions', { body: '{"messages": [ b' });
    assert.equal(malformed.status, 500);
    const error = record(record(json(malformed))['error']);
    assert.deepEqual(Object.keys(error), ['code', 'message', 'type']);
    assert.equal(error['type'], 'server_error');
    assert.match(String(error['message']), /^\[json\.exception\.parse_error\.101\] parse error at line 1, column 16: /);
    const missing = await call(node.url, 'POST', '/v1/chat/completions', { body: { model: 'x' } });
    assert.equal(missing.status, 400);
    assert.equal(missing.text, '{"error":{"code":400,"message":"\'messages\' is required","type":"invalid_request_error"}}');
  });

  test("answers unknown routes with llama.cpp's 404 body", async () => {
    const answer = await call(node.url, 'GET', '/v1/nothing-here');
    assert.equal(answer.status, 404);
    assert.equal(answer.text, '{"error":{"message":"File Not Found","type":"not_found_error","code":404}}');
  });

  test('records every request with method, path, query, model and the clock time', async () => {
    node.clearRecording();
    await call(node.url, 'POST', '/v1/chat/completions?trace=1', { body: chat('hi', { model: 'body-model', max_tokens: 1 }) });
    await call(node.url, 'GET', '/props?model=query-model&x=y');
    await call(node.url, 'GET', '/__sim/stats');
    assert.deepEqual(node.requests(), [
      { method: 'POST', path: '/v1/chat/completions', query: { trace: '1' }, model: 'body-model', at: 1_796_009_474_000 },
      { method: 'GET', path: '/props', query: { model: 'query-model', x: 'y' }, model: 'query-model', at: 1_796_009_474_000 },
    ]);
    assert.deepEqual(
      { ...node.stats(), connectionsOpen: 0 },
      { inFlight: 0, completed: 2, clientAborted: 0, connectionsOpen: 0 },
    );
  });
});

describe('llamacpp sim node options', () => {
  test('without metrics answers /metrics with the 501 not_supported_error', async () => {
    const node = await startSimNode(llama({ metrics: false }));
    try {
      const answer = await call(node.url, 'GET', '/metrics');
      assert.equal(answer.status, 501);
      assert.equal(
        answer.text,
        '{"error":{"code":501,"message":"This server does not support metrics endpoint. Start it with `--metrics`","type":"not_supported_error"}}',
      );
    } finally {
      await node.close();
    }
  });

  test('with an api_key rejects other routes with Invalid API Key and leaves public ones open', async () => {
    const node = await startSimNode(llama({ apiKey: 'secret' }));
    try {
      const denied = await call(node.url, 'POST', '/v1/chat/completions', { body: chat('hi') });
      assert.equal(denied.status, 401);
      assert.equal(denied.text, '{"error":{"message":"Invalid API Key","type":"authentication_error","code":401}}');
      assert.equal((await call(node.url, 'GET', '/props', { headers: { authorization: 'Bearer wrong' } })).status, 401);
      assert.equal((await call(node.url, 'GET', '/props', { headers: { authorization: 'Bearer secret' } })).status, 200);
      assert.equal((await call(node.url, 'GET', '/props', { headers: { 'x-api-key': 'secret' } })).status, 200);
      for (const path of ['/health', '/v1/health', '/models', '/v1/models']) {
        assert.equal((await call(node.url, 'GET', path)).status, 200, path);
      }
    } finally {
      await node.close();
    }
  });

  test('in unified KV mode fails concurrent requests that exhaust the pool together with 500s', async () => {
    const node = await startSimNode(llama({ contextTokens: 60, slots: 2, tokensPerSecond: 150, kv: 'unified' }));
    try {
      const content = 'x '.repeat(20 - 7);
      const streaming = call(node.url, 'POST', '/v1/chat/completions', { body: chat(content, { max_tokens: 35, stream: true }) });
      await waitUntil(() => node.stats().inFlight === 1);
      const plain = call(node.url, 'POST', '/v1/chat/completions', { body: chat(content, { max_tokens: 35 }) });
      const [streamed, answered] = await Promise.all([streaming, plain]);
      assert.equal(answered.status, 500);
      assert.equal(answered.text, '{"error":{"code":500,"message":"Context size has been exceeded.","type":"server_error"}}');
      assert.equal(streamed.status, 200);
      const events = sseData(streamed.text);
      assert.deepEqual(events.at(-1), { error: { code: 500, message: 'Context size has been exceeded.', type: 'server_error' } });
      assert.ok(!events.includes('[DONE]'));
      const alone = await call(node.url, 'POST', '/v1/chat/completions', { body: chat(content, { max_tokens: 35 }) });
      assert.equal(alone.status, 200, 'one request alone fits the pool');
    } finally {
      await node.close();
    }
  });

  test('in per-slot KV mode the same concurrent requests both succeed', async () => {
    const node = await startSimNode(llama({ contextTokens: 60, slots: 2, tokensPerSecond: 300, kv: 'per-slot' }));
    try {
      const content = 'x '.repeat(20 - 7);
      const answers = await Promise.all(
        [1, 2].map(() => call(node.url, 'POST', '/v1/chat/completions', { body: chat(content, { max_tokens: 35 }) })),
      );
      assert.deepEqual(
        answers.map((a) => a.status),
        [200, 200],
      );
    } finally {
      await node.close();
    }
  });

  test('queues requests beyond its slots and serves them in order', async () => {
    const node = await startSimNode(llama({ slots: 1, tokensPerSecond: 200 }));
    try {
      const finished: string[] = [];
      // Long enough (0.5 s) that the second request arrives while it runs, even on a busy machine.
      const first = call(node.url, 'POST', '/v1/completions', { body: { prompt: 'first', max_tokens: 100 } }).then((a) => {
        finished.push('first');
        return a;
      });
      await waitUntil(() => node.stats().inFlight === 1);
      const second = call(node.url, 'POST', '/v1/completions', { body: { prompt: 'second', max_tokens: 1 } }).then((a) => {
        finished.push('second');
        return a;
      });
      await waitUntil(() => node.stats().inFlight === 2);
      const metrics = await call(node.url, 'GET', '/metrics');
      assert.match(metrics.text, /^llamacpp:requests_processing 1$/m);
      assert.match(metrics.text, /^llamacpp:requests_deferred 1$/m);
      const busy = await call(node.url, 'GET', '/slots?fail_on_no_slot=1');
      assert.equal(busy.status, 503);
      assert.equal(busy.text, '{"error":{"code":503,"message":"no slot available","type":"unavailable_error"}}');
      const answers = await Promise.all([first, second]);
      assert.deepEqual(
        answers.map((a) => a.status),
        [200, 200],
      );
      assert.deepEqual(finished, ['first', 'second']);
    } finally {
      await node.close();
    }
  });
});
