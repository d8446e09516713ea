// Issue 42: a request in a large fleet reads the nodes that may serve its model (the fleet port's
// `offering`, nodes/model-offers.ts), not every view: sizing a prompt and resolving the served name
// give the same answers from those alone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MockAgent } from 'undici';
import { sizePrompt, type SizingDeps } from '#src/proxy/request/prompt-size.ts';
import { servedModelName } from '#src/routing/index.ts';
import type { NodeView } from '#src/nodes/index.ts';
import { model, node, NOW, snapshotOf } from '#test/fixtures/builders.ts';

function vllmNode(name: string, ctx: number): NodeView {
  const base = node(name, { kind: 'vllm', models: ['m'] });
  const listed = model('m', { contextTokens: ctx });
  return { ...base, discovery: { ...base.discovery, models: [listed] }, modelsById: new Map([['m', listed]]) };
}

const ask = (content: string) => ({
  endpoint: '/v1/chat/completions',
  model: 'm',
  json: { model: 'm', messages: [{ role: 'user', content }] },
  maxTokens: 16,
  nowMs: NOW,
  tokenizeTimeoutMs: 1000,
});

test('a prompt is sized from the nodes offering its model: the rest of the fleet is not read', () => {
  const agent = new MockAgent();
  agent.disableNetConnect();
  const serving = [vllmNode('v', 100_000)];
  const others = Array.from({ length: 1000 }, (_, i) => node(`n${i}`, { kind: 'vllm', models: ['other'] }));
  const all = [...others, ...serving];
  const deps: SizingDeps = {
    fleet: {
      views: () => {
        throw new Error('the whole fleet was read');
      },
      offering: (asked) => (asked === 'm' ? serving : []),
      snapshot: () => snapshotOf(all),
    },
    pools: { get: () => agent },
  };
  const whole: SizingDeps = { fleet: { views: () => all, snapshot: () => snapshotOf(all) }, pools: { get: () => agent } };
  const signal = new AbortController().signal;
  assert.deepEqual(sizePrompt(deps, ask('hello there'), signal), sizePrompt(whole, ask('hello there'), signal));
});

test('a listed name resolves from the offering alone; a name no offering node lists still asks every node', () => {
  const a = node('a', { kind: 'ollama', models: ['llama3:latest'] });
  const b = node('b', { kind: 'vllm', models: ['m'] });
  assert.equal(servedModelName('m', [a, b], [b]), 'm');
  assert.equal(servedModelName('llama3', [a, b], []), servedModelName('llama3', [a, b]));
});
