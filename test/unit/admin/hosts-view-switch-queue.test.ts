// Issue 41, item 3: an operator sees who holds a llama-server router's switch queue — the router's own
// queue or the gateway's — and why. The decision is the scheduler's (scheduler/queue-holder.ts, the one
// routing acts on); /admin/hosts and the explain rows only read it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hostsView } from '#src/admin/hosts-view.ts';
import { explainRouting } from '#src/admin/explain.ts';
import { createPolicy, defaultFilters } from '#src/routing/index.ts';
import type { NodeView } from '#src/nodes/index.ts';
import { node, policyContext, request, snapshotOf } from '#test/fixtures/builders.ts';
import { rig } from '#test/unit/scheduler/fake-fleet.ts';

/** A llama-server router at --models-max 1 stating `build`, running model-a with model-b loadable. */
function router(name: string, build: string): NodeView {
  return node(name, {
    kind: 'llamacpp',
    models: ['model-a'],
    onDemand: { 'model-b': 'unloaded' },
    capacity: {
      role: 'router',
      router: { maxInstances: 1, autoload: true },
      server: { version: build },
      models: { 'model-a': { nCtx: 4_096, slots: 1 } },
    },
  });
}

const plain = node('vllm-1', { kind: 'vllm', models: ['model-a'], capacity: { role: 'single' } });

function hosts(views: readonly NodeView[], holders: ReturnType<ReturnType<typeof rig>['scheduler']['switchQueues']>) {
  const snapshot = snapshotOf(views);
  return hostsView({
    views,
    inFlight: snapshot.inFlight,
    usage: snapshot.usage,
    queueDepths: {},
    switchQueues: holders,
    now: snapshot.now,
  }).hosts;
}

test('/admin/hosts: a new router with one tenant holds its own switch queue; an old build leaves it to the gateway, with the reason', () => {
  const views = [router('new', 'b10587-3f545bec'), router('old', 'b10200-0123abcd'), plain];
  const r = rig(views);
  const rows = hosts(views, r.scheduler.switchQueues());
  const byName = new Map(rows.map((h) => [h.name, h.switch_queue]));
  assert.equal(byName.get('new')?.holder, 'router');
  assert.match(byName.get('new')?.reason ?? '', /b10587 queues per model itself/);
  assert.deepEqual(byName.get('old'), {
    holder: 'gateway',
    reason: "its build b10200 predates the router's own queue (b10313)",
  });
  assert.equal(byName.get('vllm-1'), undefined, 'not a router: no switch queue shown');
  assert.ok(!('switch_queue' in (rows.find((h) => h.name === 'vllm-1') ?? {})));
});

test('/admin/hosts: router_queue = "gateway", tenants and [cluster] replicas each name the gateway with their reason', () => {
  const views = [router('new', 'b10587-3f545bec')];
  const cases = [
    [{ mode: 'gateway', tenants: 0, replicas: false }, 'routing.router_queue = "gateway"'],
    [{ mode: 'auto', tenants: 2, replicas: false }, /^2 tenants share its queue/],
    [{ mode: 'auto', tenants: 1, replicas: true }, /^\[cluster\] replicas/],
  ] as const;
  for (const [config, reason] of cases) {
    const r = rig(views, { switchQueue: () => config });
    const [row] = hosts(views, r.scheduler.switchQueues());
    assert.equal(row?.switch_queue?.holder, 'gateway', JSON.stringify(config));
    if (typeof reason === 'string') assert.equal(row?.switch_queue?.reason, reason);
    else assert.match(row?.switch_queue?.reason ?? '', reason);
  }
});

test('/admin/hosts: a router whose build is not known yet is left to the gateway, saying so', () => {
  const unknown = node('r', {
    kind: 'llamacpp',
    models: ['model-a'],
    capacity: { role: 'router', router: { maxInstances: 1, autoload: true } },
  });
  const [row] = hosts([unknown], rig([unknown]).scheduler.switchQueues());
  assert.deepEqual(row?.switch_queue, { holder: 'gateway', reason: 'its build is not stated' });
});

test("explain: each router node's row names who holds its switch queue, as /admin/hosts does", () => {
  const views = [router('new', 'b10587-3f545bec'), router('old', 'b10200-0123abcd'), plain];
  const holders = rig(views).scheduler.switchQueues();
  const policy = createPolicy('least-in-flight', policyContext());
  const explained = explainRouting(
    request('model-a'),
    snapshotOf(views),
    defaultFilters(),
    { explain: policy.explain?.bind(policy) ?? (() => undefined), prefixHits: () => ({ promptChars: 0, matchedChars: 0 }) },
    undefined,
    undefined,
    undefined,
    holders,
  );
  const rows = new Map(explained.nodes.map((n) => [n.node, n.switch_queue?.holder]));
  assert.deepEqual(Object.fromEntries(rows), { new: 'router', old: 'gateway', 'vllm-1': undefined });
  assert.equal(explained.nodes.find((n) => n.node === 'old')?.switch_queue?.reason, holders.get('old')?.reason);
});
