// 404 or 503 for a model nothing can serve now: a node's last known listing is what it would serve,
// whatever its health or the listing's age, so a name no node's last listing takes is unknown
// (404, with the nearest served names); only a node that has never listed its models (still
// `untried`) leaves it in doubt (503). A name outside the client's scope is unknown to it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { closestNames, editDistance, judgeModel, unknownVerdict, type ModelVerdict } from '#src/routing/index.ts';
import { node } from '#test/fixtures/builders.ts';
import type { NodeView } from '#src/nodes/index.ts';

const known = (name: string, models: readonly string[]): NodeView => node(name, { models });
/** A node whose listing expired after it had listed `models` (failed fetches keep the last listing). */
const expired = (name: string, models: readonly string[], health: 'healthy' | 'dead' = 'dead'): NodeView =>
  node(name, { models, phase: 'expired', health });
/** A node that has never listed anything and whose fetches failed past fail_threshold. */
const gaveUp = (name: string): NodeView => {
  const view = node(name, { health: 'dead' });
  return { ...view, discovery: { ...view.discovery, phase: 'expired', fails: 3 } };
};
const withAllowList = (view: NodeView, allowed: readonly string[]): NodeView => ({
  ...view,
  spec: { ...view.spec, allowedModels: allowed },
});

const cases: readonly {
  name: string;
  nodes: readonly NodeView[];
  model: string;
  remote?: readonly string[];
  outOfScope?: boolean;
  want: ModelVerdict;
}[] = [
  {
    name: 'every listing current, none lists it: unknown, nearest first',
    nodes: [known('a', ['llama-3.1-8b', 'qwen3-8b']), known('b', ['llama-3.1-70b', 'mistral-7b'])],
    model: 'llama-3.1-8',
    want: { kind: 'unknown', closest: ['llama-3.1-8b', 'llama-3.1-70b', 'qwen3-8b', 'mistral-7b'] },
  },
  {
    name: 'a known_empty node counts as listed',
    nodes: [known('a', ['m1']), node('b', { models: [] })],
    model: 'm2',
    want: { kind: 'unknown', closest: ['m1'] },
  },
  {
    name: 'a node lists it (dead or busy alike): served',
    nodes: [known('a', ['m1']), node('b', { models: ['m2'], health: 'dead' })],
    model: 'm2',
    want: { kind: 'served' },
  },
  {
    name: 'a degraded node still listing it: served',
    nodes: [node('a', { models: ['m2'], phase: 'degraded' })],
    model: 'm2',
    want: { kind: 'served' },
  },
  {
    name: 'only a dead node whose listing expired listed it: served (unavailable, 503), never unknown',
    nodes: [known('a', ['m1']), expired('b', ['m2'])],
    model: 'm2',
    want: { kind: 'served' },
  },
  {
    name: 'an on-demand model (router, not loaded) is served',
    nodes: [node('r', { onDemand: { 'big-model': 'unloaded' } })],
    model: 'big-model',
    want: { kind: 'served' },
  },
  {
    name: 'a dead node whose listing expired, serving something else: unknown (its last listing is what it would serve)',
    nodes: [known('a', ['qwen3-8B', 'llama-3.1-8b']), known('b', ['mistral-7b']), expired('c', ['gemma-2b'])],
    model: 'qwen3-8B-typo',
    want: { kind: 'unknown', closest: ['qwen3-8B', 'gemma-2b', 'llama-3.1-8b', 'mistral-7b'] },
  },
  {
    name: 'a degraded node serving something else: unknown',
    nodes: [known('a', ['m1']), node('b', { models: ['m2'], phase: 'degraded' })],
    model: 'm9',
    want: { kind: 'unknown', closest: ['m1', 'm2'] },
  },
  {
    name: 'a healthy node whose listing expired: its last listing still decides',
    nodes: [known('a', ['m1']), expired('b', ['m2'], 'healthy')],
    model: 'm9',
    want: { kind: 'unknown', closest: ['m1', 'm2'] },
  },
  {
    name: 'a node that has never listed (untried): unsure',
    nodes: [known('a', ['m1']), node('b')],
    model: 'm9',
    want: { kind: 'unsure', unlisted: ['b'] },
  },
  {
    name: 'a dead node that has never listed, not yet given up on: unsure',
    nodes: [known('a', ['m1']), node('b', { health: 'dead' })],
    model: 'm9',
    want: { kind: 'unsure', unlisted: ['b'] },
  },
  {
    name: 'a node that never listed and whose listing expired (fail_threshold fetches failed): the doubt is over, unknown',
    nodes: [known('a', ['m1']), gaveUp('b')],
    model: 'm9',
    want: { kind: 'unknown', closest: ['m1'] },
  },
  {
    name: 'a never-listed node whose allow-list refuses the name leaves no doubt',
    nodes: [known('a', ['m1']), withAllowList(node('b'), ['llama-*'])],
    model: 'm9',
    want: { kind: 'unknown', closest: ['m1'] },
  },
  {
    name: 'a never-listed node whose allow-list admits the name: unsure',
    nodes: [known('a', ['m1']), withAllowList(node('b'), ['m*'])],
    model: 'm9',
    want: { kind: 'unsure', unlisted: ['b'] },
  },
  { name: 'no node at all: unsure', nodes: [], model: 'm9', want: { kind: 'unsure', unlisted: [] } },
  {
    name: 'a fresh remote site lists it: served',
    nodes: [known('a', ['m1'])],
    model: 'm9',
    remote: ['m9'],
    want: { kind: 'served' },
  },
  {
    name: 'remote models are suggested too',
    nodes: [known('a', ['m1'])],
    model: 'm3',
    remote: ['m2'],
    want: { kind: 'unknown', closest: ['m1', 'm2'] },
  },
  {
    name: 'at most five suggestions, each once',
    nodes: [known('a', ['m1', 'm2', 'm3', 'm4']), known('b', ['m1', 'm5', 'm6', 'zzzzzz'])],
    model: 'm0',
    want: { kind: 'unknown', closest: ['m1', 'm2', 'm3', 'm4', 'm5'] },
  },
  {
    name: 'out of scope: unknown even while a node has never listed and another is dead',
    nodes: [known('a', ['m1']), node('b'), expired('c', ['m2'])],
    model: 'm2',
    outOfScope: true,
    want: { kind: 'unknown', closest: ['m2', 'm1'] },
  },
  {
    name: 'out of scope: unknown even with no node at all',
    nodes: [],
    model: 'm2',
    outOfScope: true,
    want: { kind: 'unknown', closest: [] },
  },
];

for (const c of cases) {
  test(`judgeModel: ${c.name}`, () => {
    const input = {
      nodes: c.nodes,
      model: c.model,
      requested: c.model,
      remoteModels: c.remote === undefined ? undefined : new Set(c.remote),
    };
    // Out of scope: a gate's verdict, answered as unknown whatever the fleet says (unknownVerdict).
    const verdict = c.outOfScope === true ? unknownVerdict(input) : judgeModel(input);
    assert.deepEqual(verdict, c.want);
  });
}

test('unknownVerdict: out of scope, the suggestions are only names inside the scope', () => {
  const verdict = unknownVerdict({
    nodes: [known('a', ['team-a-chat', 'secret-model'])],
    requested: 'secret-model',
    visible: (name) => name.startsWith('team-a'),
  });
  assert.deepEqual(verdict, { kind: 'unknown', closest: ['team-a-chat'] });
});

test('judgeModel ranks by the name the client typed, not the alias it resolved to', () => {
  const verdict = judgeModel({
    nodes: [known('a', ['qwen3-8b', 'llama-3.1-8b'])],
    model: 'resolved-elsewhere',
    requested: 'qwen3-8',
  });
  assert.deepEqual(verdict, { kind: 'unknown', closest: ['qwen3-8b', 'llama-3.1-8b'] });
});

const distances: readonly [string, string, number][] = [
  ['', '', 0],
  ['abc', '', 3],
  ['', 'abc', 3],
  ['kitten', 'sitting', 3],
  ['llama', 'Llama', 0],
  ['qwen3-8b', 'qwen3:8b', 1],
  ['gpt-4o', 'gpt4o', 1],
];
for (const [a, b, want] of distances) {
  test(`editDistance(${JSON.stringify(a)}, ${JSON.stringify(b)}) = ${want}`, () => {
    assert.equal(editDistance(a, b), want);
    assert.equal(editDistance(b, a), want);
  });
}

test('closestNames breaks ties alphabetically and honours the limit', () => {
  assert.deepEqual(closestNames('ab', ['ax', 'xb', 'ab', 'zz'], 3), ['ab', 'ax', 'xb']);
  assert.deepEqual(closestNames('ab', ['ax'], 0), []);
});
