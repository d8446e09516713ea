// One contract for the ports the request plane reaches the control plane through (src/ports/), run
// against both hosts: the main thread's (the Scheduler and registry themselves) and a worker's (over
// a real MessageChannel to the owner's LeaseDesk). Same request, same fleet: the same admission,
// the same wait, the same refusal, the same failover verdict (router-room included), each lease
// and load ticket returned exactly once, each report applied once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { NodeView } from '#src/nodes/index.ts';
import type { Admission, QueueSettings } from '#src/scheduler/index.ts';
import type { TenantSpec } from '#src/tenants/tenants-config.ts';
import type { TenantAdmission, TenantAsk, TenantOutcome } from '#src/tenants/index.ts';
import { node, request } from '#test/fixtures/builders.ts';
import { CROSS_THREAD, HOSTS, owner, type Host, type HostKind, type Owner } from './ports-rig.ts';
import { tenantSpec } from '#test/fixtures/builders.ts';

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
  if (a.kind === 'refused')
    return `refused ${a.reason} after ${a.waitedMs}ms [${a.excluded.map((e) => `${e.node}:${e.code}`).join(' ')}]`;
  return `admitted ${a.node.spec.name} (${a.route.policy}) after ${a.waitedMs}ms${a.load === undefined ? '' : `, loads within ${a.load.timeoutMs}ms`}`;
}

/** An admission whose outcome can be read before it settles. */
function ask(
  host: Host,
  model: string,
  tried: readonly string[] = [],
): { promise: Promise<Admission>; outcome: () => Admission | undefined } {
  let outcome: Admission | undefined;
  // An admission decided at once may come without a promise: the same answer, made one here.
  const promise = Promise.resolve(
    host.admission.admit(
      request(model, { triedNodes: new Set(tried) }),
      SETTINGS,
      new AbortController().signal,
      tried.length === 0,
    ),
  );
  void promise.then((a) => (outcome = a));
  return { promise, outcome: () => outcome };
}

function contract(
  name: string,
  body: (o: Owner, host: Host, kind: HostKind) => Promise<void>,
  nodes: () => readonly NodeView[],
  only?: HostKind,
): void {
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

contract(
  'admits to the node routing selects, with the policy that chose it',
  async (_o, host) => {
    assert.equal(describe(await ask(host, 'm').promise), 'admitted a (least-in-flight) after 0ms');
  },
  () => [oneSlot('a', ['m'])],
);

contract(
  'queues behind a busy node and admits when its lease returns, with the wait',
  async (o, host) => {
    const first = await ask(host, 'm').promise;
    const second = ask(host, 'm');
    await host.settle();
    assert.equal(describe(second.outcome()), 'waiting');
    o.clock.advance(40);
    assert.ok(first.kind === 'admitted');
    first.release();
    assert.equal(describe(await second.promise), 'admitted a (least-in-flight) after 40ms');
  },
  () => [oneSlot('a', ['m'])],
);

contract(
  'refuses a model nothing serves, with every exclusion',
  async (_o, host) => {
    assert.equal(describe(await ask(host, 'nope').promise), 'refused unavailable after 0ms [a:missing]');
  },
  () => [oneSlot('a', ['m'])],
);

contract(
  'refuses a queued request when the queue time is up, with why it waited',
  async (o, host) => {
    await ask(host, 'm').promise;
    const second = ask(host, 'm');
    await host.settle();
    o.clock.advance(SETTINGS.queueTimeoutMs);
    assert.equal(describe(await second.promise), 'refused queue_timeout after 1000ms [a:no_slot]');
  },
  () => [oneSlot('a', ['m'])],
);

contract(
  'hasAlternative counts a busy node but not a full router busy with another model (router-room)',
  async (o, host) => {
    // The router runs x (one request of it in flight); m would need a switch, and none can start.
    const busy = await ask(host, 'x').promise;
    assert.equal(describe(busy), 'admitted r (least-in-flight) after 0ms');
    await host.settle();
    const m = request('m');
    assert.equal(host.admission.hasAlternative(m), true, 'v serves m');
    assert.equal(
      host.admission.hasAlternative({ ...m, triedNodes: new Set(['v']) }),
      false,
      'v failed; the router has no room for m',
    );
    assert.equal(o.scheduler.hasAlternative({ ...m, triedNodes: new Set(['v']) }), false, 'the owner agrees');
    assert.ok(busy.kind === 'admitted');
    busy.release();
    await host.settle();
    assert.equal(
      host.admission.hasAlternative({ ...m, triedNodes: new Set(['v']) }),
      true,
      'x is idle: the router can switch to m',
    );
  },
  () => [node('v', { models: ['m'], kind: 'vllm' }), router('r', 'x', ['m'])],
);

contract(
  'hasAlternative counts a node whose slots are all taken (a request would queue for it), never a tried one',
  async (_o, host) => {
    await ask(host, 'm').promise;
    await host.settle();
    assert.equal(host.admission.hasAlternative(request('m', { triedNodes: new Set(['b']) })), true, 'a is busy, still worth it');
    assert.equal(host.admission.hasAlternative(request('m', { triedNodes: new Set(['a', 'b']) })), false);
  },
  () => [oneSlot('a', ['m']), oneSlot('b', ['m'])],
);

contract(
  'a lease is returned exactly once, however often it is released',
  async (o, host) => {
    const a = await ask(host, 'm').promise;
    assert.ok(a.kind === 'admitted');
    assert.equal(o.held(), 1);
    a.release();
    a.release();
    await host.settle();
    assert.equal(o.held(), 0);
    assert.deepEqual(o.returned, ['a/m']);
  },
  () => [oneSlot('a', ['m'])],
);

contract(
  'a load ticket settles once: one loaded switch, one refresh of the listing',
  async (o, host) => {
    const a = await ask(host, 'm').promise;
    assert.equal(describe(a), `admitted r (least-in-flight) after 0ms, loads within ${SETTINGS.loadTimeoutMs}ms`);
    assert.ok(a.kind === 'admitted' && a.load !== undefined);
    a.load.settle('loaded');
    a.load.settle('failed');
    await host.settle();
    assert.deepEqual(o.refreshes, ['r']);
  },
  () => [router('r', 'x', ['m'])],
);

contract(
  'learned contexts, token ratios, decode rates, lacking endpoints and vanished models are applied once by the owner',
  async (o, host) => {
    host.reports.learnContext('a', 'http://127.0.0.1:1/a', 'm', 8_192);
    host.reports.learnTokenRatio('a', 'http://127.0.0.1:1/a', 'm', { bytes: 400, promptTokens: 100, templateTokens: 8 });
    host.reports.learnDecodeRate('a', 'http://127.0.0.1:1/a', 'm', { tokens: 50, decodeMs: 1_000, firstTokenMs: 200 });
    host.reports.learnLackingEndpoint('a', 'http://127.0.0.1:1/a', '/v1/messages', '404 {"detail":"Not Found"}');
    host.reports.modelVanished('a');
    await host.settle();
    assert.deepEqual(o.learned, [
      'ctx a http://127.0.0.1:1/a m 8192',
      'ratio a http://127.0.0.1:1/a m {"bytes":400,"promptTokens":100,"templateTokens":8}',
      'decode a http://127.0.0.1:1/a m {"tokens":50,"decodeMs":1000,"firstTokenMs":200}',
      'lacks a http://127.0.0.1:1/a /v1/messages 404 {"detail":"Not Found"}',
    ]);
    assert.deepEqual(o.relisted, ['a']);
  },
  () => [oneSlot('a', ['m'])],
);

contract(
  "the fleet view shows the owner's nodes",
  async (_o, host) => {
    assert.deepEqual(
      host.fleet.views().map((v) => v.spec.name),
      ['a', 'b'],
    );
    assert.equal(host.fleet.view('b')?.spec.name, 'b');
    assert.equal(host.fleet.view('gone'), undefined);
  },
  () => [oneSlot('a', ['m']), oneSlot('b', ['m'])],
);

contract(
  'a worker that dies returns its leases and leaves the queue',
  async (o, host) => {
    await ask(host, 'm').promise;
    const queued = ask(host, 'm');
    await host.settle();
    assert.equal(o.held(), 1);
    assert.equal(describe(queued.outcome()), 'waiting');
    host.die?.();
    await host.settle();
    assert.equal(o.held(), 0, 'the lease came back');
    assert.deepEqual(o.scheduler.queueDepths(), {}, 'its queued admission was dropped');
  },
  () => [oneSlot('a', ['m'])],
  CROSS_THREAD,
);

// Tenant admission: the same port, judged by the owner's one ledger.

function tenant(
  name: string,
  limits: Partial<Pick<TenantSpec, 'maxConcurrent' | 'requestsPerMinute' | 'tokensPerMinute' | 'tokensPerDay'>> = {},
): TenantSpec {
  return tenantSpec(name, limits);
}

const tenantAsk = (name: string, reserveTokens = 10): TenantAsk => ({
  tenant: name,
  model: 'm',
  promptTokens: Math.min(4, reserveTokens),
  reserveTokens,
});
const SERVED_AS_RESERVED: TenantOutcome = { served: true, promptTokens: undefined, completionTokens: undefined };

function said(a: TenantAdmission): string {
  if (a.kind === 'admitted') {
    const r = a.figures?.requests;
    const t = a.figures?.tokens;
    return `admitted${r === undefined ? '' : ` requests ${r.remaining}/${r.limit}`}${t === undefined ? '' : ` tokens ${t.remaining}/${t.limit}`}`;
  }
  const x = a.refusal;
  return `limited ${x.reason} ${x.used}/${x.limit} (+${x.requested}) retry ${x.retryAfterMs ?? 'never'}ms`;
}

function tenantContract(
  name: string,
  tenants: readonly TenantSpec[],
  body: (o: Owner, host: Host) => Promise<void>,
  only?: HostKind,
): void {
  for (const kind of only === undefined ? HOSTS : [only]) {
    test(`tenants: ${name} — ${kind.name}`, async () => {
      const o = owner([], tenants);
      const host = kind.host(o);
      try {
        await body(o, host);
      } finally {
        host.close();
      }
    });
  }
}

tenantContract(
  'the N+1th request in a minute is limited by requests_per_minute, and admitted once the bucket refills',
  [tenant('t', { requestsPerMinute: 3 })],
  async (o, host) => {
    const seen: string[] = [];
    for (let i = 0; i < 4; i++) seen.push(said(await host.tenants.admitTenant(tenantAsk('t'), true)));
    assert.deepEqual(seen, [
      'admitted requests 2/3',
      'admitted requests 1/3',
      'admitted requests 0/3',
      'limited requests 3/3 (+1) retry 20000ms',
    ]);
    o.clock.advance(19_999);
    assert.match(said(await host.tenants.admitTenant(tenantAsk('t'), true)), /^limited requests .* retry 1ms$/);
    o.clock.advance(1);
    assert.equal(said(await host.tenants.admitTenant(tenantAsk('t'), true)), 'admitted requests 0/3');
  },
);

tenantContract(
  'max_concurrent counts a request until it settles, once however often it is settled',
  [tenant('t', { maxConcurrent: 2 })],
  async (o, host) => {
    const first = await host.tenants.admitTenant(tenantAsk('t'), true);
    await host.tenants.admitTenant(tenantAsk('t'), true);
    assert.equal(said(await host.tenants.admitTenant(tenantAsk('t'), true)), 'limited concurrency 2/2 (+1) retry 1000ms');
    assert.ok(first.kind === 'admitted');
    first.settle(SERVED_AS_RESERVED);
    first.settle(SERVED_AS_RESERVED);
    await host.settle();
    assert.equal(o.ledger.figures('t')?.inFlight, 1);
    assert.equal(said(await host.tenants.admitTenant(tenantAsk('t'), true)), 'admitted');
    assert.equal(said(await host.tenants.admitTenant(tenantAsk('t'), true)), 'limited concurrency 2/2 (+1) retry 1000ms');
  },
);

tenantContract(
  'tokens are reserved at admission and settled from usage: a smaller answer gives back, nothing served gives all back',
  [tenant('t', { tokensPerMinute: 100 })],
  async (o, host) => {
    const a = await host.tenants.admitTenant(tenantAsk('t', 60), true);
    assert.equal(said(a), 'admitted tokens 40/100');
    assert.equal(said(await host.tenants.admitTenant(tenantAsk('t', 60), true)), 'limited tokens 60/100 (+60) retry 12000ms');
    assert.ok(a.kind === 'admitted');
    a.settle({ served: true, promptTokens: 4, completionTokens: 6 });
    await host.settle();
    const b = await host.tenants.admitTenant(tenantAsk('t', 60), true);
    assert.equal(said(b), 'admitted tokens 30/100');
    assert.ok(b.kind === 'admitted');
    b.settle({ served: false, promptTokens: undefined, completionTokens: undefined });
    await host.settle();
    assert.equal(o.ledger.figures('t')?.remaining.tokens, 90);
    assert.deepEqual(o.ledger.figures('t')?.today, { requests: 2, promptTokens: 4, completionTokens: 6 });
    assert.equal(
      said(await host.tenants.admitTenant(tenantAsk('t', 101), true)),
      'limited tokens 10/100 (+101) retry neverms',
      'larger than the limit itself',
    );
  },
);

tenantContract(
  "tokens_per_day: the day's usage and open reservations count; the next UTC day starts over",
  [tenant('t', { tokensPerDay: 50 })],
  async (o, host) => {
    o.clock.advance(Date.UTC(2026, 11, 2, 23, 59, 0) - o.clock.now());
    const a = await host.tenants.admitTenant(tenantAsk('t', 30), true);
    assert.equal(said(a), 'admitted');
    assert.equal(said(await host.tenants.admitTenant(tenantAsk('t', 30), true)), 'limited budget 30/50 (+30) retry 60000ms');
    assert.ok(a.kind === 'admitted');
    a.settle({ served: true, promptTokens: 10, completionTokens: 10 });
    await host.settle();
    const open = await host.tenants.admitTenant(tenantAsk('t', 30), true);
    assert.equal(said(open), 'admitted');
    o.clock.advance(60_000);
    assert.equal(o.ledger.figures('t')?.remaining.budget, 20, 'a new day: only the reservation still open counts');
    assert.ok(open.kind === 'admitted');
    open.settle({ served: false, promptTokens: undefined, completionTokens: undefined });
    await host.settle();
    assert.equal(o.ledger.figures('t')?.remaining.budget, 50);
  },
);

tenantContract(
  'a tenant without limits is admitted without waiting for the owner, and still counted there',
  [tenant('open')],
  async (o, host) => {
    let decided: TenantAdmission | undefined;
    void host.tenants.admitTenant(tenantAsk('open'), false).then((a) => (decided = a));
    await Promise.resolve();
    assert.equal(decided === undefined ? 'waiting' : said(decided), 'admitted', 'no round trip');
    await host.settle();
    assert.equal(o.ledger.figures('open')?.inFlight, 1);
    assert.ok(decided?.kind === 'admitted');
    decided.settle({ served: true, promptTokens: 3, completionTokens: 4 });
    await host.settle();
    assert.equal(o.ledger.figures('open')?.inFlight, 0);
    assert.deepEqual(o.ledger.figures('open')?.today, { requests: 1, promptTokens: 3, completionTokens: 4 });
  },
);

tenantContract(
  'a worker that dies has its open requests settled: none stays in flight',
  [tenant('t', { maxConcurrent: 1 })],
  async (o, host) => {
    await host.tenants.admitTenant(tenantAsk('t'), true);
    assert.equal(o.ledger.figures('t')?.inFlight, 1);
    host.die?.();
    await host.settle();
    assert.equal(o.ledger.figures('t')?.inFlight, 0);
  },
  CROSS_THREAD,
);
