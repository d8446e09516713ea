import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decideAt, limitsShare, TenantLedger, type TenantLimits } from '#src/tenants/index.ts';

const NONE: TenantLimits = {
  maxConcurrent: undefined,
  requestsPerMinute: undefined,
  tokensPerMinute: undefined,
  tokensPerDay: undefined,
};
const ask = { tenant: 't', model: 'm', promptTokens: 10, reserveTokens: 20 };
const zero = { inFlight: 0, requestsUsed: 0, tokensUsed: 0, todayTokens: 0 };

test('limitsShare: limit / live replicas, at least 1, undefined stays undefined', () => {
  const cases: [TenantLimits, number, TenantLimits][] = [
    [{ ...NONE, requestsPerMinute: 6 }, 3, { ...NONE, requestsPerMinute: 2 }],
    [{ ...NONE, requestsPerMinute: 5 }, 3, { ...NONE, requestsPerMinute: 1 }],
    [{ ...NONE, maxConcurrent: 2 }, 3, { ...NONE, maxConcurrent: 1 }],
    [
      { maxConcurrent: 9, requestsPerMinute: 10, tokensPerMinute: 1000, tokensPerDay: 100_000 },
      2,
      { maxConcurrent: 4, requestsPerMinute: 5, tokensPerMinute: 500, tokensPerDay: 50_000 },
    ],
    [{ ...NONE, tokensPerDay: 7 }, 1, { ...NONE, tokensPerDay: 7 }],
    [{ ...NONE, tokensPerDay: 7 }, 0, { ...NONE, tokensPerDay: 7 }],
    // A live count that is not one (a store's nonsense reaching it) counts as 1: never a NaN limit, which admits everything.
    [{ ...NONE, tokensPerDay: 7 }, Number.NaN, { ...NONE, tokensPerDay: 7 }],
    [{ ...NONE, requestsPerMinute: 6 }, Number.POSITIVE_INFINITY, { ...NONE, requestsPerMinute: 6 }],
    [{ ...NONE, requestsPerMinute: 6 }, -3, { ...NONE, requestsPerMinute: 6 }],
  ];
  for (const [limits, live, expected] of cases)
    assert.deepEqual(limitsShare(limits, live), expected, `${JSON.stringify(limits)} / ${live}`);
});

test("decideAt: the shared figures judged in order, with the refusal's figure", () => {
  const cases: [TenantLimits, typeof zero, string, number | undefined][] = [
    [{ ...NONE, requestsPerMinute: 5 }, { ...zero, requestsUsed: 4 }, 'admitted', undefined],
    [{ ...NONE, requestsPerMinute: 5 }, { ...zero, requestsUsed: 5 }, 'requests', 5],
    [{ ...NONE, maxConcurrent: 2, requestsPerMinute: 5 }, { ...zero, inFlight: 2, requestsUsed: 5 }, 'concurrency', 2],
    [{ ...NONE, tokensPerMinute: 100 }, { ...zero, tokensUsed: 90 }, 'tokens', 90],
    [{ ...NONE, tokensPerDay: 100 }, { ...zero, todayTokens: 81 }, 'budget', 81],
  ];
  for (const [limits, counters, kind, used] of cases) {
    const d = decideAt(ask, limits, counters, 0);
    assert.equal(d.kind === 'admitted' ? 'admitted' : d.refusal.reason, kind);
    if (d.kind === 'limited') assert.equal(d.refusal.used, used);
  }
});

test("the ledger judges by the replica's share when told the live replicas", () => {
  const ledger = new TenantLedger(
    () => 0,
    [
      {
        name: 't',
        keys: ['k'],
        models: ['*'],
        sites: undefined,
        priority: 'standard',
        weight: 1,
        maxConcurrent: undefined,
        requestsPerMinute: 6,
        tokensPerMinute: undefined,
        tokensPerDay: undefined,
      },
    ],
  );
  const kinds = Array.from({ length: 4 }, () => ledger.admit(ask, false, 3).decision.kind);
  assert.deepEqual(kinds, ['admitted', 'admitted', 'limited', 'limited']);
  assert.equal(ledger.admit(ask).decision.kind, 'admitted', 'alone: the whole limit');
});
