// /admin/explain shows who waits in the explained model's queue, by priority class and tenant,
// from the scheduler's own queue report (the one /admin/tenants shows).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { explainQueue, explainRouting } from '#src/admin/explain.ts';
import { createPolicy, defaultFilters } from '#src/routing/index.ts';
import { ask, oneSlotNode, rig, settle } from '#test/unit/scheduler/fake-fleet.ts';
import { policyContext, request, snapshotOf } from '#test/fixtures/builders.ts';

const policy = createPolicy('least-in-flight', policyContext());
const policies = {
  explain: policy.explain?.bind(policy) ?? (() => undefined),
  prefixHits: () => ({ promptChars: 0, matchedChars: 0 }),
};

test('explain shows the model queue by class and tenant, from the scheduler report', async () => {
  const r = rig([oneSlotNode('a', ['m'])]);
  await ask(r, 'm').promise;
  ask(r, 'm', { req: { tenant: { name: 'bulk', priority: 'batch', weight: 1 } } });
  ask(r, 'm', { req: { tenant: { name: 'bulk', priority: 'batch', weight: 1 } } });
  ask(r, 'm', { req: { tenant: { name: 'chat', priority: 'interactive', weight: 2 } } });
  ask(r, 'm');
  await settle();
  const queue = explainQueue(r.scheduler.queueReport().m);
  assert.deepEqual(queue, {
    depth: 4,
    by_class: { interactive: 1, standard: 1, batch: 2 },
    by_tenant: { bulk: 2, chat: 1, default: 1 },
  });
  const explained = explainRouting(
    request('m'),
    snapshotOf([oneSlotNode('a', ['m'])]),
    defaultFilters(),
    policies,
    undefined,
    undefined,
    queue,
  );
  assert.deepEqual(explained.queue, queue);
  assert.deepEqual(
    explainQueue(r.scheduler.queueReport().other),
    { depth: 0, by_class: { interactive: 0, standard: 0, batch: 0 }, by_tenant: {} },
    'nobody waits',
  );
  assert.equal(
    'queue' in explainRouting(request('m'), snapshotOf([]), defaultFilters(), policies),
    false,
    'no scheduler asked: no queue part',
  );
});
