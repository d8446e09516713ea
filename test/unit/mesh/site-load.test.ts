import { test } from 'node:test';
import assert from 'node:assert/strict';
import { siteLoad } from '#src/mesh/index.ts';
import { nodeSlots } from '#src/mesh/site-load.ts';
import { node } from '../../fixtures/builders.ts';

test("a node's slots: a single server's own figure, else the sum over its models, 0 when unknown", () => {
  assert.equal(nodeSlots(node('a', { models: ['m'], capacity: { role: 'single', host: { nCtx: 8192, slots: 4 } } })), 4);
  assert.equal(
    nodeSlots(node('a', { models: ['m', 'n'], capacity: { models: { m: { nCtx: 1, slots: 2 }, n: { nCtx: 1, slots: 3 } } } })),
    5,
  );
  assert.equal(nodeSlots(node('a', { models: ['m'] })), 0);
});

test('site load: in flight over every node, queued over every model, slots over healthy nodes only', () => {
  const views = [
    node('a', { models: ['m'], capacity: { role: 'single', host: { nCtx: 8192, slots: 4 } } }),
    node('b', { models: ['m'], health: 'degraded', capacity: { role: 'single', host: { nCtx: 8192, slots: 8 } } }),
  ];
  const inFlight: Record<string, number> = { a: 3, b: 1 };
  assert.deepEqual(
    siteLoad(views, (n) => inFlight[n] ?? 0, { m: 2, n: 5 }),
    { in_flight: 4, queued: 7, slots: 4 },
  );
  assert.deepEqual(
    siteLoad([], () => 0, {}),
    { in_flight: 0, queued: 0, slots: 0 },
  );
});
