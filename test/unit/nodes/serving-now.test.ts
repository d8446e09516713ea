// The one meaning of "serving now" (/v1/models, /admin/models, `switchyard models`, the dashboard):
// a node that is not dead, whose listing routing still takes (known or degraded; an asleep node by
// its last listing, after a wake), and that lists the model.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { servingNow, type NodeView, type Serving } from '#src/nodes/index.ts';
import { node } from '#test/fixtures/builders.ts';

const expiredLast = (health: 'healthy' | 'dead' | 'asleep'): NodeView => node('n', { models: ['m'], phase: 'expired', health });

const cases: readonly { name: string; view: NodeView; want: Serving | undefined }[] = [
  { name: 'listed and loaded, healthy', view: node('n', { models: ['m'] }), want: { how: 'loaded', asleep: false } },
  {
    name: 'listed on demand (a router)',
    view: node('n', { onDemand: { m: 'unloaded' } }),
    want: { how: 'on_demand', asleep: false },
  },
  {
    name: 'degraded: the last listing still routes',
    view: node('n', { models: ['m'], phase: 'degraded' }),
    want: { how: 'loaded', asleep: false },
  },
  {
    name: 'ejected for a while: still serving (skipped only while others can)',
    view: node('n', { models: ['m'], ejectedUntil: Number.MAX_SAFE_INTEGER }),
    want: { how: 'loaded', asleep: false },
  },
  { name: 'dead, its listing still current: not serving', view: node('n', { models: ['m'], health: 'dead' }), want: undefined },
  { name: 'dead, its listing expired: not serving', view: expiredLast('dead'), want: undefined },
  { name: 'healthy, but its listing expired: not serving', view: expiredLast('healthy'), want: undefined },
  {
    name: 'asleep, its listing expired while it slept: serving after a wake',
    view: expiredLast('asleep'),
    want: { how: 'loaded', asleep: true },
  },
  { name: 'not listed', view: node('n', { models: ['other'] }), want: undefined },
  { name: 'lists nothing (known_empty)', view: node('n', { models: [] }), want: undefined },
  { name: 'never listed (untried): nothing is known', view: node('n'), want: undefined },
];

for (const c of cases) {
  test(`servingNow: ${c.name}`, () => {
    assert.deepEqual(servingNow(c.view, 'm'), c.want);
  });
}

test('servingNow: a model the allow-list refuses is not served, even if listed', () => {
  const view = node('n', { models: ['m'] });
  assert.equal(servingNow({ ...view, spec: { ...view.spec, allowedModels: ['other-*'] } }, 'm'), undefined);
});
