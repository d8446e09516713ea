import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MockAgent } from 'undici';
import { sizePrompt, type SizingDeps } from '#src/proxy/request/size-prompt.ts';
import type { NodeView } from '#src/nodes/index.ts';
import { model, node, NOW, snapshotOf } from '#test/fixtures/builders.ts';

/** A vLLM node serving `m` with a listed context of `ctx` tokens. */
function vllmNode(ctx: number): NodeView {
  const base = node('v', { kind: 'vllm', models: ['m'] });
  const listed = model('m', { contextTokens: ctx });
  return { ...base, discovery: { ...base.discovery, models: [listed] }, modelsById: new Map([['m', listed]]) };
}

function depsOf(nodes: readonly NodeView[], agent: MockAgent): SizingDeps {
  return { fleet: { views: () => nodes, snapshot: () => snapshotOf(nodes) }, pools: { get: () => agent } };
}

const ask = (content: string) => ({
  endpoint: '/v1/chat/completions',
  model: 'm',
  json: { model: 'm', messages: [{ role: 'user', content }] },
  maxTokens: 16,
  nowMs: NOW,
  tokenizeTimeoutMs: 1000,
});

test('a prompt far from every context is sized at once: bounds, not a promise (no turn of the event loop)', () => {
  const agent = new MockAgent();
  agent.disableNetConnect();
  const sized = sizePrompt(depsOf([vllmNode(100_000)], agent), ask('hello there'), new AbortController().signal);
  assert.ok(!(sized instanceof Promise));
  assert.equal(sized.exact, false);
  assert.ok(sized.upper >= sized.lower && sized.upper > 0);
});

test("a prompt whose bounds straddle the context is counted by the node's tokenizer: a promise of the exact bounds", async () => {
  const agent = new MockAgent();
  agent.disableNetConnect();
  agent.get('http://127.0.0.1:1').intercept({ path: '/v/tokenize', method: 'POST' }).reply(200, { count: 300 });
  const sized = sizePrompt(depsOf([vllmNode(1000)], agent), ask('word '.repeat(400)), new AbortController().signal);
  assert.ok(sized instanceof Promise);
  const bounds = await sized;
  assert.equal(bounds.exact, true);
  // The node's count, with the chat template's tokens it adds around the messages.
  assert.ok(bounds.upper >= 300 && bounds.upper < 400 && bounds.lower <= bounds.upper);
  await agent.close();
});
