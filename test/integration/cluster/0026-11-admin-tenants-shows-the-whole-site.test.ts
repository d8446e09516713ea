// Issue 26: with [cluster], GET /admin/tenants showed only the replica asked (what it admitted),
// so behind a load balancer each answer showed a different part of a tenant's usage. Now each
// replica publishes its part to the store and the report sums every replica's (scope "site"),
// names them (replicas), marks one that stopped publishing as expired (its in-flight leaves the
// sum, its counts of today stay), and falls back to the replica's own view, saying so, while the
// store cannot be read. Two replicas in this process on a real redis-server.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { type SlotCountingNode } from '#test/fixtures/slot-counting-node.ts';
import { type Replicas } from '#test/fixtures/cluster-replicas.ts';
import { startSlotReplicas, type SlotReplicas } from '#test/fixtures/slot-replicas.ts';
import { postFresh, type Answer } from '#test/fixtures/fresh-connection.ts';
import { eventually, httpJson } from '#test/fixtures/http.ts';
import type { TenantsReport } from '#src/tenants/index.ts';
import { untilEvent } from '#test/fixtures/events.ts';

const TTL_MS = 1_500;
const BUDGET = 1_000_000;
const TENANTS = `
[[tenants]]
name = "open"
keys = ["sk-open-26"]

[[tenants]]
name = "lim"
keys = ["sk-lim-26"]
tokens_per_day = ${BUDGET}
`;

let rig: SlotReplicas | undefined;
let node: SlotCountingNode;
let replicas: Replicas | undefined;

before(async () => {
  rig = await startSlotReplicas({
    node: { slots: 16, holdMs: 5 },
    count: 2,
    leaseTtl: `${TTL_MS}ms`,
    extra: `[routing]\nqueue_timeout = "60s"\n${TENANTS}`,
    counted: true,
  });
  ({ node, replicas } = rig);
});
after(() => rig?.close());

function post(url: string, key: string, user: string): Promise<Answer> {
  return postFresh(
    `${url}/v1/chat/completions`,
    { model: 'm', user, messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 },
    { authorization: `Bearer ${key}` },
  );
}

async function tenants(url: string): Promise<TenantsReport> {
  return JSON.parse((await httpJson('GET', `${url}/admin/tenants`)).text) as TenantsReport;
}

/** Reads the report until `done` holds (each replica publishes three times per lease_ttl) or the bound passes; the last read either way. */
async function reportWhen(url: string, done: (r: TenantsReport) => boolean, timeoutMs = 20_000): Promise<TenantsReport> {
  let last = await tenants(url);
  await eventually(async () => done((last = await tenants(url))), timeoutMs, 'the report').catch(() => undefined);
  return last;
}

const of = (r: TenantsReport, name: string) => r.tenants.find((t) => t.name === name);
const urls = (): string[] => (replicas?.gateways ?? []).map((gw) => gw.url);

test('traffic for a tenant on both replicas: GET /admin/tenants on either shows the sum and names both', async () => {
  const [r0, r1] = urls();
  assert.ok(r0 !== undefined && r1 !== undefined);
  const answers = await Promise.all([
    post(r0, 'sk-open-26', 'o0'),
    post(r0, 'sk-open-26', 'o1'),
    post(r0, 'sk-open-26', 'o2'),
    post(r1, 'sk-open-26', 'o3'),
    post(r1, 'sk-open-26', 'o4'),
    post(r0, 'sk-lim-26', 'l0'),
    post(r1, 'sk-lim-26', 'l1'),
    post(r1, 'sk-lim-26', 'l2'),
  ]);
  assert.deepEqual(
    answers.map((a) => a.status),
    [200, 200, 200, 200, 200, 200, 200, 200],
  );
  for (const url of [r0, r1]) {
    // Each replica's part and the shared day are settled and published a moment after the answers: wait for all of it.
    const spent = (r: TenantsReport): number =>
      (of(r, 'lim')?.today.promptTokens ?? 0) + (of(r, 'lim')?.today.completionTokens ?? 0);
    const report = await reportWhen(
      url,
      (r) =>
        of(r, 'open')?.today.requests === 5 &&
        of(r, 'lim')?.today.requests === 3 &&
        of(r, 'lim')?.remaining.budget === BUDGET - spent(r),
    );
    assert.equal(report.scope, 'site', `${url}: the report is the site's`);
    assert.equal(of(report, 'open')?.today.requests, 5, `${url}: the open tenant's requests of both replicas (3 + 2)`);
    assert.equal(of(report, 'lim')?.today.requests, 3, `${url}: the limited tenant's requests of both replicas (1 + 2)`);
    assert.deepEqual(Object.keys(report.replicas ?? {}).sort(), ['r0', 'r1'], 'both replicas named');
    assert.equal(report.replicas?.r0?.live, true);
    assert.equal(report.replicas?.r1?.live, true);
    const lim = of(report, 'lim');
    const used = (lim?.today.promptTokens ?? 0) + (lim?.today.completionTokens ?? 0);
    assert.ok(used > 0);
    assert.equal(lim?.remaining.budget, BUDGET - used, `${url}: the day budget left is the shared one (every replica's tokens)`);
  }
});

test('requests running on both replicas: in flight summed; a replica that stops is marked expired and its in-flight leaves the sum', async () => {
  const [r0, r1] = urls();
  assert.ok(r0 !== undefined && r1 !== undefined);
  node.pause();
  const running = [post(r0, 'sk-open-26', 'f0'), post(r1, 'sk-open-26', 'f1')];
  try {
    await untilEvent(() => node.seen.running === 2, [node.changes], 'both requests at the node');
    const report = await reportWhen(
      r0,
      (r) => of(r, 'open')?.inFlight === 2 && r.replicas?.r0?.inFlight === 1 && r.replicas?.r1?.inFlight === 1,
    );
    assert.equal(of(report, 'open')?.inFlight, 2, 'one in flight at each replica');
    assert.equal(report.replicas?.r0?.inFlight, 1);
    assert.equal(report.replicas?.r1?.inFlight, 1);
  } finally {
    node.resume();
  }
  assert.deepEqual(
    (await Promise.all(running)).map((a) => a.status),
    [200, 200],
  );
  await reportWhen(r0, (r) => of(r, 'open')?.inFlight === 0 && of(r, 'open')?.today.requests === 7);
  // r1 stops publishing (as a dead replica would): past lease_ttl it is named as expired.
  await replicas?.gateways[1]?.close();
  const report = await reportWhen(r0, (r) => r.replicas?.r1?.expired === true);
  assert.equal(report.replicas?.r1?.expired, true, 'the stopped replica is marked expired');
  assert.equal(report.replicas?.r1?.live, false);
  assert.equal(of(report, 'open')?.inFlight, 0);
  assert.equal(of(report, 'open')?.today.requests, 7, 'its requests of today still count (3 + 2 + 1 + 1)');
});

test('store unreachable: the replica\'s own view, with scope "replica", never an error', async () => {
  const [r0] = urls();
  assert.ok(r0 !== undefined);
  replicas?.redis.pause();
  try {
    const started = performance.now();
    const res = await httpJson('GET', `${r0}/admin/tenants`);
    assert.equal(res.status, 200);
    const report = JSON.parse(res.text) as TenantsReport;
    assert.equal(report.scope, 'replica', "says it is the replica's own view");
    assert.equal(report.store, 'unreachable');
    assert.equal(typeof report.storeReason, 'string');
    assert.equal(of(report, 'open')?.today.requests, 4, "the replica's own counts (3 + 1)");
    assert.ok(performance.now() - started < 60_000, 'answered within the store call bound, not held by the paused store');
  } finally {
    replicas?.redis.resume();
  }
  const back = await reportWhen(r0, (r) => r.scope === 'site');
  assert.equal(back.scope, 'site', "the site's view again once the store answers");
});
