// Every registered discovery source (src/mesh/discovery-source.ts) keeps the same promises.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DISCOVERY_SOURCES, siteSources, type SourceDeps } from '#src/mesh/index.ts';
import { NOW, node } from '../fixtures/builders.ts';

const deps: SourceDeps = {
  nodeViews: () => [node('a', { models: ['m2', 'm1'] }), node('b', { models: ['m1'], health: 'dead' })],
  staticModels: () => [{ id: 's1', ctx: 2048 }, { id: 's2' }],
};

for (const [name, factory] of Object.entries(DISCOVERY_SOURCES)) {
  test(`discovery source ${name}: named as registered, answers a list or unknown with a reason`, () => {
    const source = factory(deps);
    assert.equal(source.name, name);
    const answer = source.models(NOW);
    if (answer.kind === 'unknown') assert.ok(answer.reason.length > 0);
    else {
      for (const m of answer.models) {
        assert.equal(typeof m.id, 'string');
        assert.ok(m.id.length > 0);
        if (m.ctx !== undefined) assert.ok(Number.isInteger(m.ctx) && m.ctx > 0, `${name}: ctx ${m.ctx}`);
        if (m.on_demand !== undefined) assert.equal(m.on_demand, true, `${name}: on_demand is present only when true`);
      }
      assert.equal(new Set(answer.models.map((m) => m.id)).size, answer.models.length, `${name}: each id once`);
    }
  });

  test(`discovery source ${name}: pure (same state, same answer) and does not throw on an empty site`, () => {
    const source = factory(deps);
    assert.deepEqual(source.models(NOW), source.models(NOW));
    const empty = factory({ nodeViews: () => [], staticModels: () => [] });
    const answer = empty.models(NOW);
    assert.ok(answer.kind === 'unknown' || answer.models.length === 0);
  });
}

test('the site runs every registered source by default; an unknown name is a clear error', () => {
  assert.deepEqual(
    siteSources(deps).map((s) => s.name),
    Object.keys(DISCOVERY_SOURCES),
  );
  assert.throws(() => siteSources(deps, ['kserve']), /unknown discovery source 'kserve' \(known: node-listing, static\)/);
});
