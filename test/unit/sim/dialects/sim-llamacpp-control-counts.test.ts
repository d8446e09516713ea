// Contract: a llamacpp sim node (single and router) serves `POST /v1/chat/completions/control` and
// the OpenAI-style counts as llama-server does at 3f545becc (server-context.cpp `post_control`,
// `handle_count_tokens`; docs/protocols.md §7.z3): a control on the running completion's id with
// `reasoning_control` armed is `{"success": true}`; unarmed, finished or unknown is 200 with
// `success: false` and the server's message; a missing id or an unknown action is 400. The counts
// answer `{"input_tokens": N, "object": "response.input_tokens"}`; the router loads an unloaded
// model for a count, as its proxy_post does.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { request } from 'undici';
import { startSimNode, type SimNode, type SimNodeSpec } from '#src/sim/index.ts';
import { call, json, record } from '#test/unit/sim/dialects/sim-http.ts';

const SINGLE: SimNodeSpec = {
  kind: 'llamacpp',
  models: [{ id: 'tiny' }],
  contextTokens: 512,
  slots: 2,
  ttftMs: 1,
  tokensPerSecond: 5,
};
const ROUTER: SimNodeSpec = {
  kind: 'llamacpp-router',
  models: [{ id: 'model-a', status: 'loaded' }, { id: 'model-b' }],
  contextTokens: 512,
  slots: 2,
  ttftMs: 1,
  tokensPerSecond: 5,
  loadTimeMs: 20,
  modelsMax: 2,
};

/** Starts a slow stream and reads its first chunk's id; the stream is left running. */
async function runningCompletion(node: SimNode, model: string, armed: boolean): Promise<{ id: string; stop(): void }> {
  const controller = new AbortController();
  const answer = await request(`${node.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      model,
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 100,
      stream: true,
      ...(armed ? { reasoning_control: true } : {}),
    }),
    signal: controller.signal,
  });
  // Read on without breaking off: leaving the body would end the client's stream, and the generation with it.
  const text = await new Promise<string>((resolve, reject) => {
    let seen = '';
    answer.body.on('data', (chunk: Buffer) => {
      seen += chunk.toString('utf8');
      if (seen.includes('\n\n')) resolve(seen);
    });
    answer.body.on('error', reject);
  });
  const first = record(JSON.parse(text.slice(text.indexOf('data:') + 5, text.indexOf('\n\n'))));
  assert.match(String(first['id']), /^chatcmpl-/);
  return {
    id: String(first['id']),
    stop: () => {
      answer.body.on('error', () => {});
      controller.abort();
    },
  };
}

for (const [what, spec, model] of [
  ['single', SINGLE, 'tiny'],
  ['router', ROUTER, 'model-a'],
] as const) {
  test(`${what}: control on a running completion, unarmed, unknown, malformed`, async () => {
    const node = await startSimNode(spec);
    try {
      const armed = await runningCompletion(node, model, true);
      const unarmed = await runningCompletion(node, model, false);
      const control = (body: unknown) => call(node.url, 'POST', '/v1/chat/completions/control', { body });
      const ok = await control({ id: armed.id, action: 'reasoning_end', model });
      assert.equal(ok.status, 200);
      assert.deepEqual(json(ok), { success: true });
      const notArmed = await control({ id: unarmed.id, action: 'reasoning_end', model });
      assert.deepEqual(json(notArmed), { success: false, message: 'reasoning control not enabled for this completion' });
      const unknown = await control({ id: 'chatcmpl-nope', action: 'reasoning_end', model });
      assert.equal(unknown.status, 200);
      assert.deepEqual(json(unknown), { success: false, message: 'no active completion for this id' });
      const noId = await control({ action: 'reasoning_end', model });
      assert.equal(noId.status, 400);
      assert.equal(record(record(json(noId))['error'])['message'], 'missing completion id');
      const badAction = await control({ id: armed.id, action: 'pause', model });
      assert.equal(badAction.status, 400);
      assert.equal(record(record(json(badAction))['error'])['message'], 'unknown control action');
      armed.stop();
      unarmed.stop();
    } finally {
      await node.close();
    }
  });

  test(`${what}: the OpenAI-style counts`, async () => {
    const node = await startSimNode(spec);
    try {
      for (const path of ['/v1/chat/completions/input_tokens', '/chat/completions/input_tokens']) {
        const counted = await call(node.url, 'POST', path, {
          body: { model, messages: [{ role: 'user', content: 'one two three' }] },
        });
        assert.equal(counted.status, 200, counted.text);
        const body = record(json(counted));
        assert.equal(body['object'], 'response.input_tokens');
        assert.ok(Number(body['input_tokens']) > 3);
      }
      for (const path of ['/v1/responses/input_tokens', '/responses/input_tokens']) {
        const counted = await call(node.url, 'POST', path, { body: { model, input: 'one two three' } });
        assert.equal(counted.status, 200, counted.text);
        assert.equal(record(json(counted))['object'], 'response.input_tokens');
      }
    } finally {
      await node.close();
    }
  });
}

test('router: a count for an unloaded model loads it (proxy_post autoloads)', async () => {
  const node = await startSimNode(ROUTER);
  try {
    const counted = await call(node.url, 'POST', '/v1/chat/completions/input_tokens', {
      body: { model: 'model-b', messages: [{ role: 'user', content: 'hi' }] },
    });
    assert.equal(counted.status, 200, counted.text);
    const models = record(json(await call(node.url, 'GET', '/models')))['data'] as Record<string, unknown>[];
    const b = models.find((m) => m['id'] === 'model-b');
    assert.equal(record(b?.['status'])['value'], 'loaded');
  } finally {
    await node.close();
  }
});
