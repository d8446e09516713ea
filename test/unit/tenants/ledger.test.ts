import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { TenantSpec } from '#src/tenants/tenants-config.ts';
import { judgeAdmission, rateDuration, TenantLedger, usedTokens, type TenantLimits } from '#src/tenants/index.ts';
import { limitedError, limitedHeaders, tenantReservation } from '#src/tenants/index.ts';
import { tenantSpec } from '#test/fixtures/builders.ts';

const NONE: TenantLimits = {
  maxConcurrent: undefined,
  requestsPerMinute: undefined,
  tokensPerMinute: undefined,
  tokensPerDay: undefined,
};
const NOON = Date.UTC(2026, 11, 2, 12, 0, 0);

test('judgeAdmission: concurrency → request rate → token rate → daily budget, each with its wait', () => {
  const all: TenantLimits = { maxConcurrent: 2, requestsPerMinute: 60, tokensPerMinute: 600, tokensPerDay: 1_000 };
  const base = { limits: all, inFlight: 0, requestsUsed: 0, tokensUsed: 0, todayTokens: 0, cost: 100, nowMs: NOON };
  const cases: [what: string, input: Partial<typeof base>, verdict: string][] = [
    ['all room', {}, 'ok'],
    [
      'at max_concurrent (and every other limit too): concurrency first',
      { inFlight: 2, requestsUsed: 60, tokensUsed: 600, todayTokens: 1_000 },
      'concurrency 1000',
    ],
    ['the request bucket full: one more in 1 s', { requestsUsed: 60, tokensUsed: 600 }, 'requests 1000'],
    ['half a request short', { requestsUsed: 59.5 }, 'requests 500'],
    ['tokens: 100 more needed at 10 a second', { tokensUsed: 600 }, 'tokens 10000'],
    ['tokens: just fits', { tokensUsed: 500 }, 'ok'],
    ['larger than the token limit itself: never', { cost: 601 }, 'tokens never'],
    ["the day's budget spent: until midnight UTC", { todayTokens: 901 }, `budget ${12 * 3_600_000}`],
    ['larger than the budget itself', { cost: 1_001, limits: { ...all, tokensPerMinute: undefined } }, 'budget never'],
    ['no limits at all', { limits: NONE, inFlight: 1e9, requestsUsed: 1e9, cost: 1e9 }, 'ok'],
    [
      'larger than the token limit itself, at max_concurrent: never, before concurrency',
      { cost: 601, inFlight: 2, requestsUsed: 60 },
      'tokens never',
    ],
    [
      'larger than the budget itself, the request bucket full: never, before the request rate',
      { cost: 1_001, requestsUsed: 60, limits: { ...all, tokensPerMinute: undefined } },
      'budget never',
    ],
  ];
  for (const [what, input, expected] of cases) {
    const v = judgeAdmission({ ...base, ...input });
    assert.equal(v.ok ? 'ok' : `${v.reason} ${v.retryAfterMs ?? 'never'}`, expected, what);
  }
});

test('usedTokens: usage when stated, the reservation when served without one, nothing when nothing was served', () => {
  const ask = { promptTokens: 30, reserveTokens: 130 };
  const cases: [served: boolean, prompt: number | undefined, completion: number | undefined, charged: string][] = [
    [true, 12, 40, '12+40'],
    [true, undefined, undefined, '30+100'],
    [true, undefined, 7, '30+7'],
    [false, undefined, undefined, '0+0'],
  ];
  for (const [served, promptTokens, completionTokens, charged] of cases) {
    const used = usedTokens(ask, { served, promptTokens, completionTokens });
    assert.equal(`${used.prompt}+${used.completion}`, charged);
  }
});

test("rateDuration: OpenAI's format", () => {
  const cases: [ms: number, text: string][] = [
    [0, '0ms'],
    [120, '120ms'],
    [999.2, '1s'],
    [1_000, '1s'],
    [1_500, '1.5s'],
    [60_000, '1m0s'],
    [360_000, '6m0s'],
    [90_500, '1m30.5s'],
    [3_723_000, '1h2m3s'],
  ];
  for (const [ms, text] of cases) assert.equal(rateDuration(ms), text);
});

test("a 429's headers: Retry-After in whole seconds, retry-after-ms exact; no retry for a wait past the clients' cap or none at all", () => {
  const refusal = {
    tenant: 't',
    reason: 'requests' as const,
    limit: 3,
    used: 3,
    requested: 1,
    figures: { requests: { limit: 3, remaining: 0, resetMs: 60_000 } },
  };
  assert.deepEqual(limitedHeaders({ ...refusal, retryAfterMs: 1_200 }), {
    'x-ratelimit-limit-requests': '3',
    'x-ratelimit-remaining-requests': '0',
    'x-ratelimit-reset-requests': '1m0s',
    'retry-after': '2',
    'retry-after-ms': '1200',
  });
  assert.equal(limitedHeaders({ ...refusal, retryAfterMs: 3_600_000 })['x-should-retry'], 'false');
  assert.equal(limitedHeaders({ ...refusal, retryAfterMs: undefined })['x-should-retry'], 'false');
});

function spec(name: string, limits: Partial<TenantSpec> = {}): TenantSpec {
  return tenantSpec(name, { keys: ['k'], ...limits });
}

test("the ledger: a reload keeps counters by name, applies changed limits at once, drops a removed tenant's", () => {
  let now = NOON;
  const ledger = new TenantLedger(() => now, [spec('a', { requestsPerMinute: 2 }), spec('b')]);
  const ask = { tenant: 'a', model: 'm', promptTokens: 5, reserveTokens: 10 };
  assert.equal(ledger.admit(ask).decision.kind, 'admitted');
  assert.equal(ledger.admit(ask).decision.kind, 'admitted');
  assert.equal(ledger.admit(ask).decision.kind, 'limited');
  ledger.configure([spec('a', { requestsPerMinute: 2 }), spec('b'), spec('c')]);
  assert.equal(ledger.admit(ask).decision.kind, 'limited', 'kept across a reload');
  ledger.configure([spec('a', { requestsPerMinute: 3 }), spec('b')]);
  assert.equal(ledger.admit(ask).decision.kind, 'admitted', 'a raised limit applies at once');
  ledger.configure([spec('b')]);
  assert.equal(ledger.figures('a'), undefined, "a removed tenant's counters go");
  ledger.configure([spec('a', { requestsPerMinute: 3 }), spec('b')]);
  assert.equal(ledger.figures('a')?.today.requests, 0);
  now += 1;
});

test("the ledger's rows: what changed since the last call; restored at start; a new day starts over", () => {
  let now = Date.UTC(2026, 11, 2, 23, 59, 0);
  const ledger = new TenantLedger(() => now, [spec('a', { tokensPerDay: 100 })]);
  const { ticket } = ledger.admit({ tenant: 'a', model: 'm', promptTokens: 5, reserveTokens: 20 });
  ticket.settle({ served: true, promptTokens: 4, completionTokens: 6 });
  assert.deepEqual(ledger.usageRows(), [
    { tenant: 'a', model: 'm', day: '2026-12-02', requests: 1, promptTokens: 4, completionTokens: 6 },
  ]);
  assert.deepEqual(ledger.usageRows(), [], 'nothing changed since');
  const restarted = new TenantLedger(() => now, [spec('a', { tokensPerDay: 100 })]);
  restarted.restore([
    { tenant: 'a', model: 'm', day: '2026-12-02', requests: 1, promptTokens: 40, completionTokens: 50 },
    { tenant: 'a', model: 'm', day: '2026-12-01', requests: 9, promptTokens: 900, completionTokens: 900 },
    { tenant: 'gone', model: 'm', day: '2026-12-02', requests: 1, promptTokens: 1, completionTokens: 1 },
  ]);
  assert.equal(restarted.figures('a')?.remaining.budget, 10, 'the budget survives a restart');
  assert.equal(restarted.admit({ tenant: 'a', model: 'm', promptTokens: 5, reserveTokens: 20 }).decision.kind, 'limited');
  now += 60_000;
  assert.equal(restarted.figures('a')?.remaining.budget, 100, 'the next UTC day');
  const late = ledger.admit({ tenant: 'a', model: 'm', promptTokens: 1, reserveTokens: 2 });
  late.ticket.settle({ served: true, promptTokens: 1, completionTokens: 1 });
  assert.deepEqual(
    ledger.usageRows().map((r) => `${r.day} ${r.requests}`),
    ['2026-12-03 1'],
  );
});

test('tenantReservation: the prompt once, plus max_tokens (or the completion reserve) for each answer asked', () => {
  assert.equal(tenantReservation(5, 1000, 512), 1005);
  assert.equal(tenantReservation(5, 1000, 512, 100), 100_005);
  assert.equal(tenantReservation(5, undefined, 512, 3), 5 + 3 * 512);
  assert.equal(tenantReservation(5, 1000, 512, 0), 1005, 'never fewer than one answer');
});

test('limitedError: a request larger than the limit itself names the limit and the reservation, as OpenAI words it', () => {
  const error = limitedError({
    tenant: 't',
    reason: 'tokens',
    limit: 20_000,
    used: 7,
    requested: 100_005,
    retryAfterMs: undefined,
    figures: undefined,
  });
  assert.equal(error.status, 429);
  assert.match(
    error.message,
    /^Request too large for tenant 't' on tokens per minute \(tokens_per_minute\): limit 20000, requested 100005\. The request is larger than the limit itself/,
  );
  assert.ok(!error.message.includes('used'), 'nothing used could make it fit');
});
