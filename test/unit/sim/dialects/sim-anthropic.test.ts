// Contract: the simulated llama-server, vLLM and Ollama answer Anthropic's Messages API as the real
// ones do (docs/protocols-endpoints.md): a `message`, the named events in their order (no `ping`,
// no `[DONE]`), `count_tokens`, and each server's own error bodies there; the SGLang simulator is an
// SGLang from before its Anthropic router, so those paths are a route-level 404.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startSimNode, type SimNode } from '#src/sim/index.ts';
import { call, json, record, sseMessages } from '#test/unit/sim/dialects/sim-http.ts';

const KINDS = ['llamacpp', 'vllm', 'ollama'] as const;
const ASK = {
  model: 'coder',
  max_tokens: 5,
  system: 'be brief',
  messages: [{ role: 'user', content: [{ type: 'text', text: 'hello there' }] }],
};

describe('Anthropic Messages on the simulated servers', () => {
  const nodes: Partial<Record<(typeof KINDS)[number] | 'sglang', SimNode>> = {};
  before(async () => {
    for (const kind of [...KINDS, 'sglang'] as const) {
      nodes[kind] = await startSimNode({
        kind,
        models: [{ id: 'coder', contextTokens: 64 }],
        contextTokens: 64,
        ttftMs: 1,
        tokensPerSecond: 5000,
      });
    }
  });
  after(async () => {
    for (const node of Object.values(nodes)) await node?.close();
  });
  const url = (kind: keyof typeof nodes): string => nodes[kind]?.url ?? assert.fail(`no ${kind} node`);

  for (const kind of KINDS) {
    test(`${kind}: a message object, with the prompt's and the answer's tokens`, async () => {
      const answer = await call(url(kind), 'POST', '/v1/messages', { body: ASK });
      assert.equal(answer.status, 200, answer.text);
      const body = record(json(answer));
      assert.equal(body['type'], 'message');
      assert.equal(body['role'], 'assistant');
      assert.equal(body['stop_reason'], 'max_tokens');
      const [block] = body['content'] as Record<string, unknown>[];
      assert.equal(block?.['type'], 'text');
      const usage = record(body['usage']);
      assert.ok(Number(usage['input_tokens']) > 2);
      assert.equal(usage['output_tokens'], 5);
    });

    test(`${kind}: the stream's events in Anthropic's order, without ping or [DONE]`, async () => {
      const answer = await call(url(kind), 'POST', '/v1/messages', { body: { ...ASK, stream: true } });
      assert.equal(answer.status, 200);
      assert.match(String(answer.headers['content-type']), /^text\/event-stream/);
      const events = sseMessages(answer.text);
      const names = events.map((e) => e.event);
      assert.deepEqual(names.slice(0, 2), ['message_start', 'content_block_start']);
      assert.deepEqual(names.slice(-3), ['content_block_stop', 'message_delta', 'message_stop']);
      assert.deepEqual(names.slice(2, -3), Array(5).fill('content_block_delta'));
      for (const e of events) assert.equal(record(JSON.parse(e.data))['type'], e.event, 'each data names its event');
      const delta = record(JSON.parse(events.at(-2)?.data ?? '{}'));
      assert.equal(record(delta['usage'])['output_tokens'], 5);
      assert.ok(!answer.text.includes('[DONE]') && !answer.text.includes('ping'));
    });

    test(`${kind}: count_tokens counts system and messages without generating`, async () => {
      const answer = await call(url(kind), 'POST', '/v1/messages/count_tokens', {
        body: { model: 'coder', system: ASK.system, messages: ASK.messages },
      });
      assert.equal(answer.status, 200);
      const counted = record(json(answer));
      assert.deepEqual(Object.keys(counted), ['input_tokens']);
      const full = record(json(await call(url(kind), 'POST', '/v1/messages', { body: ASK })));
      assert.equal(counted['input_tokens'], record(full['usage'])['input_tokens']);
    });
  }

  test('each server’s own error bodies on the Messages routes', async () => {
    const missing = { model: 'coder', max_tokens: 4 };
    const llama = await call(url('llamacpp'), 'POST', '/v1/messages', { body: missing });
    assert.equal(llama.status, 400);
    assert.deepEqual(record(json(llama))['error'], {
      code: 400,
      message: "'messages' is required",
      type: 'invalid_request_error',
    });
    const vllm = record(json(await call(url('vllm'), 'POST', '/v1/messages', { body: missing })));
    assert.equal(vllm['type'], 'error');
    assert.equal(record(vllm['error'])['type'], 'Bad Request');
    const ollama = await call(url('ollama'), 'POST', '/v1/messages', { body: { ...ASK, model: 'nope' } });
    assert.equal(ollama.status, 404);
    const ollamaBody = record(json(ollama));
    assert.deepEqual(Object.keys(ollamaBody), ['type', 'error', 'request_id']);
    assert.equal(record(ollamaBody['error'])['type'], 'not_found_error');
    // Too long for the context: llama-server keeps its OpenAI-style overflow body (PROTOCOLS.md §7.z).
    const long = { ...ASK, messages: [{ role: 'user', content: 'word '.repeat(200) }] };
    const overflow = await call(url('llamacpp'), 'POST', '/v1/messages', { body: long });
    assert.equal(overflow.status, 400);
    assert.equal(record(record(json(overflow))['error'])['type'], 'exceed_context_size_error');
    const vllmOverflow = record(json(await call(url('vllm'), 'POST', '/v1/messages', { body: long })));
    assert.equal(vllmOverflow['type'], 'error');
    assert.match(String(record(vllmOverflow['error'])['message']), /maximum context length/);
  });

  test('sglang (before its Anthropic router): a route-level 404', async () => {
    for (const path of ['/v1/messages', '/v1/messages/count_tokens']) {
      const answer = await call(url('sglang'), 'POST', path, { body: ASK });
      assert.equal(answer.status, 404);
      assert.equal(answer.text, '{"detail":"Not Found"}');
    }
  });
});
