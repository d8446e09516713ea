// The one RouteRequest builder (route-request.ts), for the request path and /admin/explain alike.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { routeRequestFor } from '#src/routing/index.ts';

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
