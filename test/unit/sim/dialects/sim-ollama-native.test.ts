// Contract: the simulated Ollama answers its native inference API as ollama/ollama does
// (server/routes.go, api/types.go; docs/protocols-endpoints.md, "Ollama's native API"): `/api/chat`
// and `/api/generate` stream NDJSON by default (`application/x-ndjson`, `done: true` last, with the
// counts), one JSON object with `"stream": false`; `/api/embed` answers one vector per input and
// `prompt_eval_count`, `/api/embeddings` one `embedding`; errors are `{"error": "..."}`.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startSimNode, type SimNode } from '#src/sim/index.ts';
import { call, json, list, record } from '#test/unit/sim/dialects/sim-http.ts';

describe('Ollama’s native API on the simulated server', () => {
  let node: SimNode;
  before(async () => {
    node = await startSimNode({
      kind: 'ollama',
      models: [{ id: 'llama3:latest', contextTokens: 512 }],
      contextTokens: 512,
      ttftMs: 1,
      tokensPerSecond: 5000,
    });
  });
  after(async () => {
    await node?.close();
  });

  test('/api/chat streams NDJSON by default, done last with the counts', async () => {
    const answer = await call(node.url, 'POST', '/api/chat', {
      body: { model: 'llama3', messages: [{ role: 'user', content: 'hi' }], options: { num_predict: 4 } },
    });
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.headers['content-type'], 'application/x-ndjson');
    assert.ok(answer.text.endsWith('\n'));
    const lines = answer.text
      .trimEnd()
      .split('\n')
      .map((l) => record(JSON.parse(l)));
    assert.equal(lines.length, 5);
    for (const line of lines.slice(0, -1)) {
      assert.deepEqual(Object.keys(line), ['model', 'created_at', 'message', 'done']);
      assert.equal(line['done'], false);
    }
    const last = lines.at(-1) ?? {};
    assert.deepEqual(Object.keys(last), [
      'model',
      'created_at',
      'message',
      'done',
      'done_reason',
      'total_duration',
      'load_duration',
      'prompt_eval_count',
      'prompt_eval_duration',
      'eval_count',
      'eval_duration',
    ]);
    assert.equal(last['done'], true);
    assert.equal(last['done_reason'], 'length');
    assert.equal(last['eval_count'], 4);
    assert.equal(last['model'], 'llama3:latest');
  });

  test('/api/generate with "stream": false answers one JSON object with the whole response and its context', async () => {
    const answer = await call(node.url, 'POST', '/api/generate', {
      body: { model: 'llama3:latest', prompt: 'once', stream: false, options: { num_predict: 3 } },
    });
    assert.equal(answer.status, 200, answer.text);
    assert.match(String(answer.headers['content-type']), /^application\/json/);
    const body = record(json(answer));
    assert.equal(body['done'], true);
    assert.equal(typeof body['response'], 'string');
    assert.ok(Array.isArray(body['context']));
    assert.equal(body['eval_count'], 3);
  });

  test('/api/embed answers a vector per input and prompt_eval_count; /api/embeddings one embedding', async () => {
    const embed = record(json(await call(node.url, 'POST', '/api/embed', { body: { model: 'llama3', input: ['a b', 'c'] } })));
    assert.equal(list(embed['embeddings']).length, 2);
    assert.ok(Number(embed['prompt_eval_count']) > 0);
    const legacy = record(json(await call(node.url, 'POST', '/api/embeddings', { body: { model: 'llama3', prompt: 'a b' } })));
    assert.ok(list(legacy['embedding']).length > 0);
  });

  test('errors are {"error": "..."}: an unknown model 404, no model 400', async () => {
    const unknown = await call(node.url, 'POST', '/api/chat', { body: { model: 'mistral', messages: [] } });
    assert.equal(unknown.status, 404);
    assert.deepEqual(json(unknown), { error: "model 'mistral' not found" });
    const none = await call(node.url, 'POST', '/api/generate', { body: { prompt: 'x' } });
    assert.equal(none.status, 400);
    assert.deepEqual(json(none), { error: 'model is required' });
  });
});
