// Contract: an `ollama` sim node answers like Ollama (PROTOCOLS.md §3).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startSimNode, type SimNode } from '#src/sim/index.ts';
import { call, chat, json, keysOf, list, record, sseData } from '#test/unit/sim/dialects/sim-http.ts';

const LOAD_MS = 30;

describe('ollama sim node', () => {
  let node: SimNode;
  before(async () => {
    node = await startSimNode({
      kind: 'ollama',
      models: ['llama3.2', 'someone/custom:7b', { id: 'warm:latest', status: 'loaded' }],
      contextTokens: 64,
      ttftMs: 2,
      tokensPerSecond: 2000,
      loadTimeMs: LOAD_MS,
    });
  });
  after(() => node.close());

  test('says "Ollama is running" on GET / and reports its version', async () => {
    const root = await call(node.url, 'GET', '/');
    assert.equal(root.status, 200);
    assert.equal(root.text, 'Ollama is running');
    assert.match(String(root.headers['content-type']), /^text\/plain/);
    assert.match((await call(node.url, 'GET', '/api/version')).text, /^\{"version":"\d+\.\d+\.\d+"\}$/);
  });

  test('lists tagged names in the OpenAI list with the namespace as owner', async () => {
    const body = record(json(await call(node.url, 'GET', '/v1/models')));
    assert.deepEqual(Object.keys(body), ['object', 'data']);
    const cards = list(body['data']).map(record);
    assert.deepEqual(
      cards.map((c) => Object.keys(c)),
      [0, 1, 2].map(() => ['id', 'object', 'created', 'owned_by']),
    );
    assert.deepEqual(
      cards.map((c) => [c['id'], c['owned_by']]),
      [
        ['llama3.2:latest', 'library'],
        ['someone/custom:7b', 'someone'],
        ['warm:latest', 'library'],
      ],
    );
    const one = await call(node.url, 'GET', '/v1/models/llama3.2');
    assert.equal(record(json(one))['id'], 'llama3.2:latest');
  });

  test('lists every model in /api/tags and only loaded ones in /api/ps with context_length', async () => {
    const tags = list(record(json(await call(node.url, 'GET', '/api/tags')))['models']);
    assert.equal(tags.length, 3);
    assert.deepEqual(keysOf(tags[0]), ['name', 'model', 'modified_at', 'size', 'digest', 'details', 'capabilities']);
    const ps = list(record(json(await call(node.url, 'GET', '/api/ps')))['models']).map(record);
    assert.deepEqual(
      ps.map((m) => m['name']),
      ['warm:latest'],
    );
    assert.deepEqual(Object.keys(ps[0] ?? {}), [
      'name',
      'model',
      'size',
      'digest',
      'details',
      'expires_at',
      'size_vram',
      'context_length',
    ]);
    assert.equal(ps[0]?.['context_length'], 64);
  });

  test('shows model_info with the context length, and 404s an unknown model', async () => {
    const shown = record(json(await call(node.url, 'POST', '/api/show', { body: { model: 'llama3.2' } })));
    assert.equal(record(shown['model_info'])['llama.context_length'], 64);
    const missing = await call(node.url, 'POST', '/api/show', { body: { model: 'nope' } });
    assert.equal(missing.status, 404);
    assert.equal(missing.text, '{"error":"model \'nope\' not found"}');
  });

  test('loads a model on its first request, taking load_time, then lists it in /api/ps', async () => {
    const started = performance.now();
    const answer = await call(node.url, 'POST', '/v1/chat/completions', {
      body: chat('hi', { model: 'someone/custom:7b', max_tokens: 1 }),
    });
    assert.equal(answer.status, 200);
    assert.ok(performance.now() - started >= LOAD_MS - 5);
    const ps = list(record(json(await call(node.url, 'GET', '/api/ps')))['models']).map((m) => record(m)['name']);
    assert.ok(ps.includes('someone/custom:7b'));
  });

  test("answers a chat in Ollama's shape, accepting a name without its tag", async () => {
    const body = record(
      json(await call(node.url, 'POST', '/v1/chat/completions', { body: chat('hi', { model: 'warm', max_tokens: 2 }) })),
    );
    assert.deepEqual(Object.keys(body), ['id', 'object', 'created', 'model', 'system_fingerprint', 'choices', 'usage']);
    assert.match(String(body['id']), /^chatcmpl-\d+$/);
    assert.equal(body['model'], 'warm:latest');
    assert.equal(body['system_fingerprint'], 'fp_ollama');
    assert.deepEqual(body['choices'], [
      { index: 0, message: { role: 'assistant', content: ' The sim' }, finish_reason: 'length' },
    ]);
    assert.deepEqual(body['usage'], { prompt_tokens: 8, completion_tokens: 2, total_tokens: 10 });
  });

  test('streams chunks carrying the role in every delta, usage per include_usage, then [DONE]', async () => {
    const events = sseData(
      (
        await call(node.url, 'POST', '/v1/chat/completions', {
          body: chat('hi', { model: 'warm', max_tokens: 2, stream: true, stream_options: { include_usage: true } }),
        })
      ).text,
    );
    assert.equal(events.length, 5);
    assert.deepEqual(record(list(record(events[0])['choices'])[0])['delta'], { role: 'assistant', content: ' The' });
    assert.equal(record(list(record(events[2])['choices'])[0])['finish_reason'], 'length');
    assert.deepEqual(record(events[3])['usage'], { prompt_tokens: 8, completion_tokens: 2, total_tokens: 10 });
    assert.equal(events[4], '[DONE]');
  });

  test('truncates a prompt longer than num_ctx instead of failing', async () => {
    const answer = await call(node.url, 'POST', '/v1/chat/completions', { body: chat('x '.repeat(200), { model: 'warm' }) });
    assert.equal(answer.status, 200);
    assert.equal(record(record(json(answer))['usage'])['prompt_tokens'], 64);
  });

  test('answers an unknown model with 404 not_found_error and code null', async () => {
    const answer = await call(node.url, 'POST', '/v1/chat/completions', { body: chat('hi', { model: 'x' }) });
    assert.equal(answer.status, 404);
    assert.equal(
      answer.text,
      '{"error":{"message":"model \\"x\\" not found, try pulling it first","type":"not_found_error","param":null,"code":null}}',
    );
  });

  test("answers malformed JSON with Go's wording and unknown routes with a plain 404", async () => {
    const malformed = await call(node.url, 'POST', '/v1/chat/completions', { body: '{"model": x' });
    assert.equal(malformed.status, 400);
    assert.equal(
      malformed.text,
      '{"error":{"message":"invalid character \'x\' looking for beginning of value","type":"invalid_request_error","param":null,"code":null}}',
    );
    const missing = await call(node.url, 'GET', '/health');
    assert.equal(missing.status, 404);
    assert.equal(missing.text, '404 page not found');
  });

  test('answers completions and embeddings', async () => {
    const completion = record(
      json(await call(node.url, 'POST', '/v1/completions', { body: { model: 'warm', prompt: 'x', max_tokens: 1 } })),
    );
    assert.match(String(completion['id']), /^cmpl-\d+$/);
    assert.deepEqual(completion['choices'], [{ text: ' The', index: 0, finish_reason: 'length' }]);
    const embeddings = record(
      json(await call(node.url, 'POST', '/v1/embeddings', { body: { model: 'warm', input: ['a', 'b'] } })),
    );
    assert.deepEqual(Object.keys(embeddings), ['object', 'data', 'model', 'usage']);
    assert.equal(list(embeddings['data']).length, 2);
  });
});

describe('ollama sim node eviction', () => {
  test('unloads the least recently used model when models_max are loaded', async () => {
    const node = await startSimNode({
      kind: 'ollama',
      models: ['a', 'b', 'c'],
      modelsMax: 2,
      loadTimeMs: 1,
      ttftMs: 1,
      tokensPerSecond: 5000,
    });
    try {
      for (const model of ['a', 'b', 'a', 'c']) {
        assert.equal(
          (await call(node.url, 'POST', '/v1/completions', { body: { model, prompt: 'x', max_tokens: 1 } })).status,
          200,
        );
      }
      const ps = list(record(json(await call(node.url, 'GET', '/api/ps')))['models']).map((m) => record(m)['name']);
      assert.deepEqual(new Set(ps), new Set(['a:latest', 'c:latest']));
    } finally {
      await node.close();
    }
  });
});
