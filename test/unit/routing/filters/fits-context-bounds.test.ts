// The fits-context filter with a prompt known only by bounds (issue 21 item 1): where the upper
// bound fits first; else the largest context where the lower bound fits, nodes that refuse an
// overflow before nodes that truncate silently; too_small only below the lower bound.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { classifyUnroutable, fitContext, mayTruncateAt } from '#src/routing/index.ts';
import type { NodeView } from '#src/nodes/index.ts';
import type { NodeSpec } from '#src/config/types.ts';
import { node, request } from '#test/fixtures/builders.ts';

function loaded(name: string, kind: NodeSpec['kind'], nCtx: number): NodeView {
  return node(name, {
    models: ['m'],
    kind,
    capacity: { role: kind === 'llamacpp' ? 'single' : 'unknown', models: { m: { nCtx, slots: undefined } } },
  });
}
function onDemand(name: string, nCtx: number): NodeView {
  return node(name, {
    onDemand: { m: 'unloaded' },
    kind: 'llamacpp',
    capacity: { role: 'router' },
    contexts: { m: { nCtx, slots: 1 } },
  });
}

interface Case {
  readonly name: string;
  readonly nodes: readonly NodeView[];
  readonly upper: number;
  readonly lower: number | undefined;
  readonly loadOnDemand?: boolean;
  readonly kept: readonly string[];
  readonly excluded: Readonly<Record<string, string>>;
}

const MAX = 8;
const CASES: readonly Case[] = [
  {
    name: 'the upper bound fits one node: only it',
    nodes: [loaded('a', 'vllm', 8192), loaded('b', 'vllm', 4096)],
    upper: 5000,
    lower: 100,
    kept: ['a'],
    excluded: { b: 'may_not_fit' },
  },
  {
    name: 'the upper bound fits both: both',
    nodes: [loaded('a', 'vllm', 8192), loaded('b', 'vllm', 4096)],
    upper: 3000,
    lower: 100,
    kept: ['a', 'b'],
    excluded: {},
  },
  {
    name: 'no node surely fits: the largest context where the lower bound fits',
    nodes: [loaded('a', 'vllm', 8192), loaded('b', 'vllm', 4096)],
    upper: 20000,
    lower: 100,
    kept: ['a'],
    excluded: { b: 'may_not_fit' },
  },
  {
    name: 'equal largest contexts share the request',
    nodes: [loaded('a', 'vllm', 8192), loaded('b', 'sglang', 8192), loaded('c', 'vllm', 4096)],
    upper: 20000,
    lower: 100,
    kept: ['a', 'b'],
    excluded: { c: 'may_not_fit' },
  },
  {
    name: 'a refusing node before a larger Ollama when neither surely fits',
    nodes: [loaded('ollama', 'ollama', 16384), loaded('vllm', 'vllm', 4096)],
    upper: 20000,
    lower: 100,
    kept: ['vllm'],
    excluded: { ollama: 'may_not_fit' },
  },
  {
    name: 'an Ollama node that surely fits is used',
    nodes: [loaded('ollama', 'ollama', 16384), loaded('vllm', 'vllm', 4096)],
    upper: 10000,
    lower: 100,
    kept: ['ollama'],
    excluded: { vllm: 'may_not_fit' },
  },
  {
    name: 'an Ollama node that may not fit waits behind a node that surely fits',
    nodes: [loaded('ollama', 'ollama', 4096), loaded('vllm', 'vllm', 16384)],
    upper: 10000,
    lower: 100,
    kept: ['vllm'],
    excluded: { ollama: 'may_not_fit' },
  },
  {
    name: 'only Ollama nodes left: the largest, since nothing can refuse',
    nodes: [loaded('o1', 'ollama', 4096), loaded('o2', 'ollama', 8192)],
    upper: 20000,
    lower: 100,
    kept: ['o2'],
    excluded: { o1: 'may_not_fit' },
  },
  {
    name: 'a context below the lower bound is too small',
    nodes: [loaded('a', 'vllm', 8192), loaded('b', 'vllm', 1024)],
    upper: 20000,
    lower: 2000,
    kept: ['a'],
    excluded: { b: 'too_small' },
  },
  {
    name: 'the lower bound past every context: all too small',
    nodes: [loaded('a', 'vllm', 8192), loaded('o', 'ollama', 4096)],
    upper: 90000,
    lower: 9000,
    kept: [],
    excluded: { a: 'too_small', o: 'too_small' },
  },
  {
    name: 'an exact count: fits or too small, as before',
    nodes: [loaded('a', 'vllm', 8192), loaded('b', 'vllm', 4096)],
    upper: 5000,
    lower: undefined,
    kept: ['a'],
    excluded: { b: 'too_small' },
  },
  {
    name: 'an unknown context surely fits',
    nodes: [node('u', { models: ['m'], kind: 'vllm' }), loaded('b', 'vllm', 4096)],
    upper: 20000,
    lower: 100,
    kept: ['u'],
    excluded: { b: 'may_not_fit' },
  },
  {
    name: 'a loaded node that surely fits before an on-demand one',
    nodes: [loaded('a', 'vllm', 8192), onDemand('r', 32768)],
    upper: 5000,
    lower: 100,
    kept: ['a'],
    excluded: { r: 'not_loaded' },
  },
  {
    name: 'an on-demand node that surely fits before a loaded node that may not',
    nodes: [loaded('a', 'vllm', 4096), onDemand('r', 32768)],
    upper: 5000,
    lower: 100,
    kept: ['r'],
    excluded: { a: 'may_not_fit' },
  },
  {
    name: 'load_on_demand off: the loaded node that may fit',
    nodes: [loaded('a', 'vllm', 4096), onDemand('r', 32768)],
    upper: 5000,
    lower: 100,
    loadOnDemand: false,
    kept: ['a'],
    excluded: { r: 'not_loaded' },
  },
];

for (const c of CASES) {
  test(c.name, () => {
    const req = request('m', {
      promptTokens: c.upper,
      minPromptTokens: c.lower,
      maxTokens: MAX,
      ...(c.loadOnDemand === undefined ? {} : { loadOnDemand: c.loadOnDemand }),
    });
    const { kept, excluded } = fitContext(req, c.nodes);
    assert.deepEqual(
      kept.map((n) => n.spec.name),
      c.kept,
    );
    assert.deepEqual(Object.fromEntries(excluded.map((e) => [e.node, e.code])), c.excluded);
    for (const e of excluded) assert.ok(e.detail !== undefined && e.detail.length > 0, `${e.node} has a reason`);
  });
}

test('every context below the lower bound is a 400; a bound that only may not fit is not', () => {
  const nodes = [loaded('a', 'vllm', 8192)];
  const proven = fitContext(request('m', { promptTokens: 90000, minPromptTokens: 9000 }), nodes);
  assert.equal(classifyUnroutable(proven.excluded), 'too_large');
  assert.match(proven.excluded[0]?.detail ?? '', /needs at least 9001 tokens, context is 8192/);
  assert.equal(fitContext(request('m', { promptTokens: 90000, minPromptTokens: 100 }), nodes).kept.length, 1);
});

test('mayTruncateAt: a silently truncating node the prompt may not fit', () => {
  const req = request('m', { promptTokens: 5000, minPromptTokens: 100, maxTokens: MAX });
  assert.equal(mayTruncateAt(req, loaded('o', 'ollama', 4096)), 4096);
  assert.equal(mayTruncateAt(req, loaded('o', 'ollama', 8192)), undefined, 'it surely fits');
  assert.equal(mayTruncateAt(req, loaded('v', 'vllm', 4096)), undefined, 'vLLM refuses instead');
  assert.equal(mayTruncateAt(req, loaded('l', 'llamacpp', 4096)), undefined, 'a llama-server refuses');
});
