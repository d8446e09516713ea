// One contract for the ports the request plane reaches the control plane through (src/ports/), run
// against both hosts: the main thread's (the Scheduler and registry themselves) and a worker's (over
// a real MessageChannel to the owner's LeaseDesk). Same request, same fleet: the same admission,
// the same wait, the same refusal, the same failover verdict (router-room included), each lease
// and load ticket returned exactly once, each report applied once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { NodeView } from '#src/nodes/index.ts';
import type { Admission, QueueSettings } from '#src/scheduler/index.ts';
import { node, request } from '#test/fixtures/builders.ts';
import { CROSS_THREAD, HOSTS, owner, type Host, type HostKind, type Owner } from './ports-rig.ts';

const SETTINGS: QueueSettings = { queueTimeoutMs: 1_000, maxQueue: 10, missWaitMs: 0, swapAfterMs: 300, loadTimeoutMs: 2_000 };

/** A llama-server with one slot per model (its slot count is enforced). */
function oneSlot(name: string, models: readonly string[]): NodeView {
  const figures = Object.fromEntries(models.map((m) => [m, { nCtx: 4_096, slots: 1 }]));
  return node(name, { models, kind: 'llamacpp', capacity: { role: 'router', models: figures } });
}

/** A llama-server router at max_instances = 1 running `loaded`, the others listed unloaded. */
function router(name: string, loaded: string, others: readonly string[]): NodeView {
  return node(name, {
    kind: 'llamacpp',
    models: [loaded],
    onDemand: Object.fromEntries(others.map((m) => [m, 'unloaded'])),
    capacity: { role: 'router', router: { maxInstances: 1, autoload: true } },
  });
}

function describe(a: Admission | undefined): string {
  if (a === undefined) return 'waiting';
  if (a.kind === 'refused') return `refused ${a.reason} after ${a.waitedMs}ms [${a.excluded.map((e) => `${e.node}:${e.code}`).join(' ')}]`;
  return `admitted ${a.node.spec.name} (${a.route.policy}) after ${a.waitedMs}ms${a.load === undefined ? '' : `, loads within ${a.load.timeoutMs}ms`}`;
}

/** An admission whose outcome can be read before it settles. */
function ask(host: Host, model: string, tried: readonly string[] = []): { promise: Promise<Admission>; outcome: () => Admission | undefined } {
  let outcome: Admission | undefined;
  const promise = host.admission.admit(request(model, { triedNodes: new Set(tried) }), SETTINGS, new AbortController().signal, tried.length === 0);
  void promise.then((a) => (outcome = a));
  return { promise, outcome: () => outcome };
}

function contract(name: string, body: (o: Owner, host: Host, kind: HostKind) => Promise<void>, nodes: () => readonly NodeView[], only?: HostKind): void {
  for (const kind of only === undefined ? HOSTS : [only]) {
    test(`${name} — ${kind.name}`, async () => {
      const o = owner(nodes());
      const host = kind.host(o);
      try {
        await body(o, host, kind);
      } finally {
        host.close();
      }
    });
  }
}

contract('admits to the node routing selects, with the policy that chose it', async (_o, host) => {
  assert.equal(describe(await ask(host, 'm').promise), 'admitted a (least-in-flight) after 0ms');
}, () => [oneSlot('a', ['m'])]);

contract('queues behind a busy node and admits when its lease returns, with the wait', async (o, host) => {
  const first = await ask(host, 'm').promise;
  const second = ask(host, 'm');
  await host.settle();
  assert.equal(describe(second.outcome()), 'waiting');
  o.clock.advance(40);
  assert.ok(first.kind === 'admitted');
  first.release();
  assert.equal(describe(await second.promise), 'admitted a (least-in-flight) after 40ms');
}, () => [oneSlot('a', ['m'])]);

contract('refuses a model nothing serves, with every exclusion', async (_o, host) => {
  assert.equal(describe(await ask(host, 'nope').promise), 'refused unavailable after 0ms [a:missing]');
}, () => [oneSlot('a', ['m'])]);

contract('refuses a queued request when the queue time is up, with why it waited', async (o, host) => {
  await ask(host, 'm').promise;
  const second = ask(host, 'm');
  await host.settle();
  o.clock.advance(SETTINGS.queueTimeoutMs);
  assert.equal(describe(await second.promise), 'refused queue_timeout after 1000ms [a:no_slot]');
}, () => [oneSlot('a', ['m'])]);

contract('hasAlternative counts a busy node but not a full router busy with another model (router-room)', async (o, host) => {
  // The router runs x (one request of it in flight); m would need a switch, and none can start.
  const busy = await ask(host, 'x').promise;
  assert.equal(describe(busy), 'admitted r (least-in-flight) after 0ms');
  await host.settle();
  const m = request('m');
  assert.equal(host.admission.hasAlternative(m), true, 'v serves m');
  assert.equal(host.admission.hasAlternative({ ...m, triedNodes: new Set(['v']) }), false, 'v failed; the router has no room for m');
  assert.equal(o.scheduler.hasAlternative({ ...m, triedNodes: new Set(['v']) }), false, 'the owner agrees');
  assert.ok(busy.kind === 'admitted');
  busy.release();
  await host.settle();
  assert.equal(host.admission.hasAlternative({ ...m, triedNodes: new Set(['v']) }), true, 'x is idle: the router can switch to m');
}, () => [node('v', { models: ['m'], kind: 'vllm' }), router('r', 'x', ['m'])]);

contract('hasAlternative counts a node whose slots are all taken (a request would queue for it), never a tried one', async (_o, host) => {
  await ask(host, 'm').promise;
  await host.settle();
  assert.equal(host.admission.hasAlternative(request('m', { triedNodes: new Set(['b']) })), true, 'a is busy, still worth it');
  assert.equal(host.admission.hasAlternative(request('m', { triedNodes: new Set(['a', 'b']) })), false);
}, () => [oneSlot('a', ['m']), oneSlot('b', ['m'])]);

contract('a lease is returned exactly once, however often it is released', async (o, host) => {
  const a = await ask(host, 'm').promise;
  assert.ok(a.kind === 'admitted');
  assert.equal(o.held(), 1);
  a.release();
  a.release();
  await host.settle();
  assert.equal(o.held(), 0);
  assert.deepEqual(o.returned, ['a/m']);
}, () => [oneSlot('a', ['m'])]);

contract('a load ticket settles once: one loaded switch, one refresh of the listing', async (o, host) => {
  const a = await ask(host, 'm').promise;
  assert.equal(describe(a), `admitted r (least-in-flight) after 0ms, loads within ${SETTINGS.loadTimeoutMs}ms`);
  assert.ok(a.kind === 'admitted' && a.load !== undefined);
  a.load.settle('loaded');
  a.load.settle('failed');
  await host.settle();
  assert.deepEqual(o.refreshes, ['r']);
}, () => [router('r', 'x', ['m'])]);

contract('learned contexts, token ratios, lacking endpoints and vanished models are applied once by the owner', async (o, host) => {
  host.reports.learnContext('a', 'http://127.0.0.1:1/a', 'm', 8_192);
  host.reports.learnTokenRatio('a', 'http://127.0.0.1:1/a', 'm', { bytes: 400, promptTokens: 100, templateTokens: 8 });
  host.reports.learnLackingEndpoint('a', 'http://127.0.0.1:1/a', '/v1/messages', '404 {"detail":"Not Found"}');
  host.reports.modelVanished('a');
  await host.settle();
  assert.deepEqual(o.learned, [
    'ctx a http://127.0.0.1:1/a m 8192',
    'ratio a http://127.0.0.1:1/a m {"bytes":400,"promptTokens":100,"templateTokens":8}',
    'lacks a http://127.0.0.1:1/a /v1/messages 404 {"detail":"Not Found"}',
  ]);
  assert.deepEqual(o.relisted, ['a']);
}, () => [oneSlot('a', ['m'])]);

contract('the fleet view shows the owner\'s nodes', async (_o, host) => {
  assert.deepEqual(host.fleet.views().map((v) => v.spec.name), ['a', 'b']);
  assert.equal(host.fleet.view('b')?.spec.name, 'b');
  assert.equal(host.fleet.view('gone'), undefined);
}, () => [oneSlot('a', ['m']), oneSlot('b', ['m'])]);

contract('a worker that dies returns its leases and leaves the queue', async (o, host) => {
  await ask(host, 'm').promise;
  const queued = ask(host, 'm');
  await host.settle();
  assert.equal(o.held(), 1);
  assert.equal(describe(queued.outcome()), 'waiting');
  host.die?.();
  await host.settle();
  assert.equal(o.held(), 0, 'the lease came back');
  assert.deepEqual(o.scheduler.queueDepths(), {}, 'its queued admission was dropped');
}, () => [oneSlot('a', ['m'])], CROSS_THREAD);
