// Who holds the requests waiting for a limited router's switch (issue 41 item 3): the router where
// its build queues itself and nothing the router does not know decides the order; else the gateway.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { routerQueueOf } from '#src/kinds/index.ts';
import { queueHolder, type QueueHolderFacts } from '#src/scheduler/queue-holder.ts';

const CURRENT = routerQueueOf('llamacpp', 'b10587-3f545bec');

const base: QueueHolderFacts = {
  mode: 'auto',
  tenants: 0,
  replicas: false,
  maxInstances: 1,
  routerQueue: CURRENT,
  models: 2,
  protectedModels: [],
};

test('the router queue fact by build: 10313 on queues, older does not, unstated or unreadable is unknown', () => {
  assert.equal(routerQueueOf('llamacpp', 'b10313-dff15d4a').state, 'queues');
  assert.equal(routerQueueOf('llamacpp', 'b10312-e1470ee6').state, 'no_queue');
  assert.equal(routerQueueOf('llamacpp', undefined).state, 'unknown');
  assert.equal(routerQueueOf('llamacpp', 'custom-build').state, 'unknown');
  assert.equal(routerQueueOf('ollama', '0.14.0').state, 'no_queue');
  assert.match(routerQueueOf('llamacpp', 'b10000-abc').detail, /b10000 predates the router's own queue \(b10313\)/);
});

const cases: readonly (readonly [string, Partial<QueueHolderFacts>, 'router' | 'gateway', RegExp])[] = [
  ['a current router, two models at --models-max 1', {}, 'router', /queues per model itself/],
  ['unlimited (--models-max 0)', { maxInstances: 0 }, 'gateway', /not a limited router/],
  ['no limit known', { maxInstances: undefined }, 'gateway', /not a limited router/],
  ['configured to hold in the gateway', { mode: 'gateway' }, 'gateway', /router_queue = "gateway"/],
  ['a build before the queue', { routerQueue: routerQueueOf('llamacpp', 'b10312-e1470ee6') }, 'gateway', /predates/],
  ['a build not stated', { routerQueue: routerQueueOf('llamacpp', undefined) }, 'gateway', /not stated/],
  ['[cluster] replicas', { replicas: true }, 'gateway', /\[cluster\]/],
  ['several tenants', { tenants: 2 }, 'gateway', /2 tenants/],
  ['one tenant', { tenants: 1 }, 'router', /queues per model/],
  ['a pinned or warm model listed', { protectedModels: ['model-a'] }, 'gateway', /model-a must stay loaded/],
  ['three models at --models-max 1', { models: 3 }, 'gateway', /3 models for --models-max 1/],
  ['three models at --models-max 2', { models: 3, maxInstances: 2 }, 'router', /queues per model/],
];

for (const [name, facts, holder, reason] of cases) {
  test(`holder: ${name} → ${holder}`, () => {
    const decided = queueHolder({ ...base, ...facts });
    assert.equal(decided.holder, holder);
    assert.match(decided.reason, reason);
  });
}
