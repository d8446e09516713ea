// 404 or 503 for a model nothing can serve now: unknown only when every listing is current and
// nothing lists it; the suggestions are the nearest served names.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { closestNames, editDistance, judgeModel, type ModelVerdict } from '#src/routing/index.ts';
import { node } from '#test/fixtures/builders.ts';
import type { NodeView } from '#src/nodes/index.ts';

const known = (name: string, models: readonly string[]): NodeView => node(name, { models });

const cases: readonly { name: string; nodes: readonly NodeView[]; model: string; remote?: readonly string[]; want: ModelVerdict }[] = [
  {
    name: 'every listing current, none lists it: unknown, nearest first',
    nodes: [known('a', ['llama-3.1-8b', 'qwen3-8b']), known('b', ['llama-3.1-70b', 'mistral-7b'])],
    model: 'llama-3.1-8',
    want: { kind: 'unknown', closest: ['llama-3.1-8b', 'llama-3.1-70b', 'qwen3-8b', 'mistral-7b'] },
  },
  {
    name: 'a known_empty node counts as current',
    nodes: [known('a', ['m1']), node('b', { models: [] })],
    model: 'm2',
    want: { kind: 'unknown', closest: ['m1'] },
  },
  { name: 'a node lists it (dead or busy alike): served', nodes: [known('a', ['m1']), node('b', { models: ['m2'], health: 'dead' })], model: 'm2', want: { kind: 'served' } },
  { name: 'a degraded node still listing it: served', nodes: [node('a', { models: ['m2'], phase: 'degraded' })], model: 'm2', want: { kind: 'served' } },
  {
    name: 'an on-demand model (router, not loaded) is served',
    nodes: [node('r', { onDemand: { 'big-model': 'unloaded' } })],
    model: 'big-model',
    want: { kind: 'served' },
  },
  { name: 'an untried node: unsure', nodes: [known('a', ['m1']), node('b')], model: 'm9', want: { kind: 'unsure', untrusted: ['b'] } },
  {
    name: 'a degraded node: unsure',
    nodes: [known('a', ['m1']), node('b', { models: ['m2'], phase: 'degraded' })],
    model: 'm9',
    want: { kind: 'unsure', untrusted: ['b'] },
  },
  {
    name: 'an expired node: unsure',
    nodes: [known('a', ['m1']), node('b', { models: [], phase: 'expired' })],
    model: 'm9',
    want: { kind: 'unsure', untrusted: ['b'] },
  },
  { name: 'no node at all: unsure', nodes: [], model: 'm9', want: { kind: 'unsure', untrusted: [] } },
  { name: 'a fresh remote site lists it: served', nodes: [known('a', ['m1'])], model: 'm9', remote: ['m9'], want: { kind: 'served' } },
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
];

for (const c of cases) {
  test(`judgeModel: ${c.name}`, () => {
    const verdict = judgeModel({ nodes: c.nodes, model: c.model, requested: c.model, remoteModels: c.remote === undefined ? undefined : new Set(c.remote) });
    assert.deepEqual(verdict, c.want);
  });
}

test('judgeModel ranks by the name the client typed, not the alias it resolved to', () => {
  const verdict = judgeModel({ nodes: [known('a', ['qwen3-8b', 'llama-3.1-8b'])], model: 'resolved-elsewhere', requested: 'qwen3-8' });
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
