import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { NodeView } from '#src/nodes/index.ts';
import { nodeListingModels, nodeLeftOut } from '#src/mesh/sources/node-listing.ts';
import { NOW, node } from '../../../fixtures/builders.ts';

function asleep(view: NodeView, wakingUntil?: number): NodeView {
  return {
    ...view,
    health: { ...view.health, status: 'asleep' },
    wake: { lastSentAt: wakingUntil === undefined ? undefined : NOW - 1, wakingUntil },
  };
}

test('node-listing: what each node contributes to the site set', () => {
  const ctx = (nCtx: number) => ({ nCtx, slots: 1 });
  const cases: { name: string; views: NodeView[]; want: unknown }[] = [
    { name: 'loaded models of a healthy node', views: [node('a', { models: ['m1', 'm2'] })], want: [{ id: 'm1' }, { id: 'm2' }] },
    {
      name: 'router models not loaded are on demand',
      views: [node('r', { models: ['hot'], onDemand: { cold: 'unloaded' } })],
      want: [{ id: 'hot' }, { id: 'cold', on_demand: true }],
    },
    {
      name: 'loaded on one node beats on demand on another, ctx is the largest',
      views: [
        node('a', { onDemand: { m: 'unloaded' }, contexts: { m: ctx(32_768) } }),
        node('b', { models: ['m'], capacity: { models: { m: ctx(8_192) } } }),
      ],
      want: [{ id: 'm', ctx: 32_768 }],
    },
    { name: 'a dead node adds nothing', views: [node('a', { models: ['m'], health: 'dead' })], want: [] },
    {
      name: 'a degraded listing keeps its last-known-good models',
      views: [node('a', { models: ['m'], phase: 'degraded' })],
      want: [{ id: 'm' }],
    },
    {
      name: 'an expired listing adds nothing (routing admits nothing there)',
      views: [node('a', { models: ['m'], phase: 'expired' }), node('b', { models: [] })],
      want: [],
    },
    {
      name: 'an asleep node (it has a wake) offers its models on demand',
      views: [asleep(node('a', { models: ['m'] }))],
      want: [{ id: 'm', on_demand: true }],
    },
    {
      name: 'an asleep node while its wake window is open: still on demand',
      views: [asleep(node('a', { models: ['m'] }), NOW + 10_000)],
      want: [{ id: 'm', on_demand: true }],
    },
    { name: 'an asleep node past its wake adds nothing', views: [asleep(node('a', { models: ['m'] }), NOW - 1)], want: [] },
    { name: 'no nodes at all: an empty set', views: [], want: [] },
  ];
  for (const c of cases) {
    const got = nodeListingModels(c.views, NOW);
    assert.equal(got.kind, 'list', c.name);
    if (got.kind === 'list') assert.deepEqual(got.models, c.want, c.name);
  }
});

test('node-listing: before any node has listed, the set is unknown (last-known-good applies), not empty', () => {
  assert.deepEqual(nodeListingModels([node('a'), node('b')], NOW), { kind: 'unknown', reason: 'no listing yet' });
});

test('node-listing: each left-out node says why', () => {
  assert.equal(nodeLeftOut(node('a', { models: ['m'], health: 'dead' }), NOW), 'dead');
  assert.equal(nodeLeftOut(asleep(node('a', { models: ['m'] }), NOW - 1), NOW), 'asleep past its wake');
  assert.equal(nodeLeftOut(node('a', { models: ['m'], phase: 'expired' }), NOW), 'listing expired');
  assert.equal(nodeLeftOut(node('a', { models: [] }), NOW), 'listing known_empty');
  assert.equal(nodeLeftOut(node('a', { models: ['m'], health: 'degraded' }), NOW), undefined);
});
