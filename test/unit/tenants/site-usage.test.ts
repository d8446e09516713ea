import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  replicaTenantsReport,
  replicaUsage,
  sharedRemaining,
  siteTenantsReport,
  type PublishedUsage,
  type ReplicaTenantUsage,
  type TenantReport,
  type TenantsReport,
} from '#src/tenants/index.ts';

const DAY = '2026-12-02';
const TTL = 3_000;

function tenant(name: string, u: Partial<ReplicaTenantUsage> = {}, limited = false): TenantReport {
  return {
    name,
    priority: 'standard',
    weight: 1,
    keys: [],
    limits: {
      maxConcurrent: null,
      requestsPerMinute: limited ? 10 : null,
      tokensPerMinute: null,
      tokensPerDay: limited ? 1_000 : null,
    },
    inFlight: u.inFlight ?? 0,
    queued: u.queued ?? 0,
    minute: u.minute ?? { requests: 0, tokens: 0 },
    today: u.today ?? { requests: 0, promptTokens: 0, completionTokens: 0 },
    remaining: { requests: limited ? 9 : null, tokens: null, budget: limited ? 900 : null },
  };
}

const use = (n: number): ReplicaTenantUsage => ({
  inFlight: n,
  queued: n,
  minute: { requests: n, tokens: 10 * n },
  today: { requests: n, promptTokens: 100 * n, completionTokens: 10 * n },
});
const part = (replica: string, ageMs: number, tenants: Record<string, ReplicaTenantUsage>, day = DAY): PublishedUsage => ({
  replica,
  ageMs,
  usage: { day, tenants, queues: { m: { byClass: { interactive: 0, standard: 1, batch: 0 }, byTenant: { a: 1 } } } },
});
const local: TenantsReport = {
  tenants: [tenant('a', use(1)), tenant('b')],
  queues: { m: { byClass: { interactive: 1, standard: 0, batch: 0 }, byTenant: { a: 1 } } },
};
const none = (): undefined => undefined;

const cases: {
  name: string;
  published: PublishedUsage[];
  expect: {
    a: Pick<TenantReport, 'inFlight' | 'queued' | 'minute' | 'today'>;
    replicas: Record<string, { live: boolean; expired?: true; inFlight: number; requestsToday: number }>;
  };
}[] = [
  {
    name: 'alone: the local counts',
    published: [],
    expect: {
      a: {
        inFlight: 1,
        queued: 1,
        minute: { requests: 1, tokens: 10 },
        today: { requests: 1, promptTokens: 100, completionTokens: 10 },
      },
      replicas: { r0: { live: true, inFlight: 1, requestsToday: 1 } },
    },
  },
  {
    name: 'own stale entry is skipped (the local report is fresher)',
    published: [part('r0', 1_000, { a: use(5) })],
    expect: {
      a: {
        inFlight: 1,
        queued: 1,
        minute: { requests: 1, tokens: 10 },
        today: { requests: 1, promptTokens: 100, completionTokens: 10 },
      },
      replicas: { r0: { live: true, inFlight: 1, requestsToday: 1 } },
    },
  },
  {
    name: 'two live others: everything summed',
    published: [part('r1', 500, { a: use(2) }), part('r2', TTL, { a: use(3) })],
    expect: {
      a: {
        inFlight: 6,
        queued: 6,
        minute: { requests: 6, tokens: 60 },
        today: { requests: 6, promptTokens: 600, completionTokens: 60 },
      },
      replicas: {
        r0: { live: true, inFlight: 1, requestsToday: 1 },
        r1: { live: true, inFlight: 2, requestsToday: 2 },
        r2: { live: true, inFlight: 3, requestsToday: 3 },
      },
    },
  },
  {
    name: 'an expired part: named, its in-flight, queued and minute left out, its today kept',
    published: [part('r1', TTL + 1, { a: use(2) })],
    expect: {
      a: {
        inFlight: 1,
        queued: 1,
        minute: { requests: 1, tokens: 10 },
        today: { requests: 3, promptTokens: 300, completionTokens: 30 },
      },
      replicas: {
        r0: { live: true, inFlight: 1, requestsToday: 1 },
        r1: { live: false, expired: true, inFlight: 0, requestsToday: 2 },
      },
    },
  },
  {
    name: 'a part of another day adds nothing to today',
    published: [part('r1', TTL + 1, { a: use(2) }, '2026-12-01')],
    expect: {
      a: {
        inFlight: 1,
        queued: 1,
        minute: { requests: 1, tokens: 10 },
        today: { requests: 1, promptTokens: 100, completionTokens: 10 },
      },
      replicas: {
        r0: { live: true, inFlight: 1, requestsToday: 1 },
        r1: { live: false, expired: true, inFlight: 0, requestsToday: 0 },
      },
    },
  },
  {
    name: 'an unreadable part: named, counts nothing',
    published: [{ replica: 'r1', ageMs: 10, usage: undefined }],
    expect: {
      a: {
        inFlight: 1,
        queued: 1,
        minute: { requests: 1, tokens: 10 },
        today: { requests: 1, promptTokens: 100, completionTokens: 10 },
      },
      replicas: { r0: { live: true, inFlight: 1, requestsToday: 1 }, r1: { live: true, inFlight: 0, requestsToday: 0 } },
    },
  },
  {
    name: 'a tenant another replica does not know of is not added; a tenant only others count is',
    published: [part('r1', 10, { zz: use(7), b: use(1) })],
    expect: {
      a: {
        inFlight: 1,
        queued: 1,
        minute: { requests: 1, tokens: 10 },
        today: { requests: 1, promptTokens: 100, completionTokens: 10 },
      },
      replicas: { r0: { live: true, inFlight: 1, requestsToday: 1 }, r1: { live: true, inFlight: 8, requestsToday: 8 } },
    },
  },
];

for (const c of cases) {
  test(`site report: ${c.name}`, () => {
    const report = siteTenantsReport({
      replica: 'r0',
      local,
      day: DAY,
      published: c.published,
      leaseTtlMs: TTL,
      remaining: none,
    });
    assert.equal(report.scope, 'site');
    const a = report.tenants.find((t) => t.name === 'a');
    assert.deepEqual({ inFlight: a?.inFlight, queued: a?.queued, minute: a?.minute, today: a?.today }, c.expect.a);
    const replicas = Object.fromEntries(
      Object.entries(report.replicas ?? {}).map(([name, r]) => [
        name,
        { live: r.live, ...(r.expired ? { expired: r.expired } : {}), inFlight: r.inFlight, requestsToday: r.requestsToday },
      ]),
    );
    assert.deepEqual(replicas, c.expect.replicas);
    assert.deepEqual(
      report.tenants.map((t) => t.name),
      ['a', 'b'],
      'the tenants in force here, in their order',
    );
  });
}

test('site report: queues summed over the live replicas; b counted by another replica', () => {
  const report = siteTenantsReport({
    replica: 'r0',
    local,
    day: DAY,
    published: [part('r1', 10, { b: use(2) }), part('r2', TTL + 1, { b: use(9) })],
    leaseTtlMs: TTL,
    remaining: none,
  });
  assert.deepEqual(report.queues, { m: { byClass: { interactive: 1, standard: 1, batch: 0 }, byTenant: { a: 2 } } });
  assert.equal(report.tenants[1]?.inFlight, 2);
  assert.equal(report.tenants[1]?.today.requests, 11);
});

test("site report: remaining is the shared counters' when given, else the local one", () => {
  const limitedLocal: TenantsReport = { tenants: [tenant('a', use(1), true), tenant('b', {}, true)], queues: {} };
  const shared = { requests: 2, tokens: null, budget: 40 };
  const report = siteTenantsReport({
    replica: 'r0',
    local: limitedLocal,
    day: DAY,
    published: [],
    leaseTtlMs: TTL,
    remaining: (t) => (t === 'a' ? shared : undefined),
  });
  assert.deepEqual(report.tenants[0]?.remaining, shared);
  assert.deepEqual(report.tenants[1]?.remaining, { requests: 9, tokens: null, budget: 900 });
});

test("sharedRemaining: buckets drained by the store's clock, the day as used plus reserved", () => {
  const limits = { maxConcurrent: 2, requestsPerMinute: 60, tokensPerMinute: 600, tokensPerDay: 1_000 };
  const rows: [string, Parameters<typeof sharedRemaining>[1], ReturnType<typeof sharedRemaining>][] = [
    [
      'nothing used',
      { inFlight: 0, requests: undefined, tokens: undefined, dayTokens: 0, nowMs: 0 },
      { requests: 60, tokens: 600, budget: 1_000 },
    ],
    [
      'used just now',
      { inFlight: 1, requests: { used: 10, atMs: 1_000 }, tokens: { used: 100, atMs: 1_000 }, dayTokens: 300, nowMs: 1_000 },
      { requests: 50, tokens: 500, budget: 700 },
    ],
    [
      '10 s later: a sixth drained',
      { inFlight: 1, requests: { used: 10, atMs: 1_000 }, tokens: { used: 600, atMs: 1_000 }, dayTokens: 300, nowMs: 11_000 },
      { requests: 60, tokens: 100, budget: 700 },
    ],
    [
      'over the day budget',
      { inFlight: 0, requests: undefined, tokens: undefined, dayTokens: 1_200, nowMs: 0 },
      { requests: 60, tokens: 600, budget: 0 },
    ],
  ];
  for (const [name, counters, expected] of rows) assert.deepEqual(sharedRemaining(limits, counters), expected, name);
  assert.deepEqual(
    sharedRemaining(
      { maxConcurrent: 1, requestsPerMinute: undefined, tokensPerMinute: undefined, tokensPerDay: undefined },
      rows[1]![1],
    ),
    { requests: null, tokens: null, budget: null },
  );
});

test('replicaUsage leaves out tenants with nothing counted; replicaTenantsReport says why', () => {
  assert.deepEqual(Object.keys(replicaUsage(local, DAY).tenants), ['a']);
  const own = replicaTenantsReport(local, 'connect ECONNREFUSED');
  assert.equal(own.scope, 'replica');
  assert.equal(own.store, 'unreachable');
  assert.equal(own.storeReason, 'connect ECONNREFUSED');
  assert.deepEqual(own.tenants, local.tenants);
});
