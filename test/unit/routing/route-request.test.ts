// What routing knows of a request (route-request.ts): the served model id its name stands for, fleet-wide
// (an exact id wins, else what most nodes resolve it to), the names a 404 suggests beside it, and the one
// RouteRequest builder, for the request path and /admin/explain alike.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { closestNames, coreName, judgeModel, routeRequestFor, servedModelName } from '#src/routing/index.ts';
import { model, node } from '#test/fixtures/builders.ts';
import type { NodeView } from '#src/nodes/index.ts';
import type { NodeKind } from '#src/config/index.ts';

const listing = (name: string, kind: NodeKind, models: readonly { id: string; aliases?: string[] }[]): NodeView => {
  const base = node(name, { kind, models: [] });
  const listed = models.map((m) => model(m.id, { aliases: m.aliases ?? [] }));
  return {
    ...base,
    discovery: { ...base.discovery, phase: 'known', models: listed },
    modelsById: new Map(listed.map((m) => [m.id, m])),
  };
};

test('servedModelName: exact ids, kind rules, votes, ties and misses', () => {
  const ollama = listing('o', 'ollama', [{ id: 'llama3.2:latest' }]);
  const ollama2 = listing('o2', 'ollama', [{ id: 'llama3.2:latest' }]);
  const router = listing('r', 'llamacpp', [{ id: 'ggml-org/llama3.2-GGUF:Q4_K_M', aliases: ['llama3.2'] }]);
  const vllm = listing('v', 'vllm', [{ id: 'llama3.2' }]);
  const table: [string, readonly NodeView[], string, string][] = [
    ['the implicit :latest', [ollama], 'llama3.2', 'llama3.2:latest'],
    ['a router alias', [router], 'llama3.2', 'ggml-org/llama3.2-GGUF:Q4_K_M'],
    ["an exact id anywhere wins over other nodes' rules", [ollama, router, vllm], 'llama3.2', 'llama3.2'],
    ['the id more nodes resolve to', [router, ollama, ollama2], 'llama3.2', 'llama3.2:latest'],
    ['a tie goes to the first id in sort order', [ollama, router], 'llama3.2', 'ggml-org/llama3.2-GGUF:Q4_K_M'],
    ['nothing resolves: the name unchanged', [ollama, router], 'mistral', 'mistral'],
    ['a vLLM node takes only its ids', [vllm], 'llama3.2:latest', 'llama3.2:latest'],
    ['no nodes', [], 'x', 'x'],
  ];
  for (const [what, nodes, requested, expected] of table) assert.equal(servedModelName(requested, nodes), expected, what);
});

test('coreName drops the namespace in front and the tag behind', () => {
  assert.equal(coreName('meta-llama/Llama-3-8B'), 'Llama-3-8B');
  assert.equal(coreName('llama3.2:latest'), 'llama3.2');
  assert.equal(coreName('hf.co/org/repo:Q4_K_M'), 'repo');
  assert.equal(coreName('plain'), 'plain');
});

test('closestNames ranks by the core name first, so decorations do not push the related model down', () => {
  assert.deepEqual(closestNames('llama3.3', ['llava:7b', 'llama3.2:latest', 'qwen3:8b'], 2), ['llama3.2:latest', 'llava:7b']);
  assert.deepEqual(closestNames('Llama-3-8B', ['meta-llama/Llama-3-8B-Instruct', 'gemma-2b', 'meta-llama/Llama-3-8B'], 1), [
    'meta-llama/Llama-3-8B',
  ]);
  assert.deepEqual(closestNames('llama3.2', ['llama3.2:1b', 'llama3.2:3b', 'llama3'], 3), [
    'llama3.2:1b',
    'llama3.2:3b',
    'llama3',
  ]);
});

test('closestNames reads a bounded prefix of a huge typed name', () => {
  assert.deepEqual(closestNames('x'.repeat(1_000_000), ['xx', 'y'], 1), ['xx']);
});

test('the 404 suggestions are names some node takes: ids, and an alias only where its kind resolves it', () => {
  const router = listing('r', 'llamacpp', [
    { id: 'tiny-a', aliases: ['gpt-4o-mini', 'shared'] },
    { id: 'tiny-b', aliases: ['shared'] },
  ]);
  const vllm = listing('v', 'vllm', [{ id: 'served', aliases: ['vllm-alias'] }]);
  const verdict = judgeModel({ nodes: [router, vllm], model: 'gpt-4o-mimi', requested: 'gpt-4o-mimi' });
  assert.equal(verdict.kind, 'unknown');
  assert.ok(verdict.kind === 'unknown' && verdict.closest[0] === 'gpt-4o-mini', JSON.stringify(verdict));
  const all = judgeModel({ nodes: [router, vllm], model: 'x', requested: 'x' });
  assert.ok(all.kind === 'unknown');
  assert.ok(
    all.kind === 'unknown' && !all.closest.includes('shared') && !all.closest.includes('vllm-alias'),
    JSON.stringify(all),
  );
  assert.deepEqual(judgeModel({ nodes: [router], model: 'gpt-4o-mini', requested: 'gpt-4o-mini' }), { kind: 'served' });
});

test('routeRequestFor builds the same request for the request path and /admin/explain', () => {
  const req = routeRequestFor(
    { model: 'm', group: 'gpu', promptTokens: 100, maxTokens: 20 },
    { completionReserveTokens: 256, loadOnDemand: false, policy: 'round-robin' },
  );
  assert.deepEqual(
    { ...req, triedNodes: [...req.triedNodes] },
    {
      model: 'm',
      group: 'gpu',
      triedNodes: [],
      promptTokens: 100,
      maxTokens: 20,
      completionReserveTokens: 256,
      loadOnDemand: false,
      policy: 'round-robin',
    },
  );
  const own = routeRequestFor(
    { model: 'm', group: undefined, promptTokens: undefined, maxTokens: undefined, policy: 'weighted' },
    { completionReserveTokens: 256, loadOnDemand: false, policy: 'round-robin' },
  );
  assert.equal(own.policy, 'weighted', "a model's own policy wins over [routing] policy");
});
