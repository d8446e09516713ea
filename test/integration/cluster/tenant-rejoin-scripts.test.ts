// The tenant scripts on a real redis-server, through RedisStore: the UTC day is the store's
// (TIME picks among the candidate keys whatever the replica's clock says), a settle applies once
// per ticket (sent again after a lost reply: no change; a cancel of a reserve that never arrived:
// no change), and a fallback batch is added once per batch id.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'iovalkey';
import { RedisStore, type SharedLimits, type StoreDays } from '#src/cluster/index.ts';
import { dayCandidates, utcDay } from '#src/tenants/index.ts';
import { startRedisServer, type RedisServer } from '#test/fixtures/redis-server.ts';

const DAY = 86_400_000;
const GRACE = 3_600_000;
const LIMITS: SharedLimits = { maxConcurrent: undefined, requestsPerMinute: 100, tokensPerMinute: 100_000, tokensPerDay: 1_000 };

let redis: RedisServer | undefined;
let store: RedisStore | undefined;
let raw: Redis | undefined;

before(async () => {
  redis = await startRedisServer();
  store = new RedisStore({
    url: redis.url,
    password: undefined,
    replica: 'a',
    leaseTtlMs: 5_000,
    callTimeoutMs: 2_000,
    prefix: 's:',
  });
  await store.connect();
  raw = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 0, commandTimeout: 2_000 });
  await raw.connect();
});
after(async () => {
  await store?.close();
  raw?.disconnect();
  await redis?.stop();
});

function days(estimateMs: number): StoreDays {
  const c = dayCandidates(estimateMs);
  return { days: c.days, startMs: c.startMs, graceMs: GRACE };
}

async function dayTokens(tenant: string, day: string): Promise<number> {
  return Number((await raw?.get(`s:tenant{${tenant}}:day:${day}`)) ?? 0);
}

async function storeToday(): Promise<string> {
  const [s] = (await raw?.time()) ?? [0];
  return utcDay(Number(s) * 1000);
}

test("the day is the store's: a replica a day ahead or behind still counts today's key", async () => {
  assert.ok(store !== undefined);
  const today = await storeToday();
  const cases: [string, number][] = [
    ['in step', 0],
    ['a day ahead', DAY],
    ['a day behind', -DAY],
    ['13 h ahead', 13 * 3_600_000],
  ];
  let sum = 0;
  for (const [what, skew] of cases) {
    const answer = await store.reserve({
      tenant: 'd',
      ticket: `d/${what}`,
      limits: LIMITS,
      cost: 50,
      days: days(Date.now() + skew),
      force: false,
    });
    sum += 50;
    assert.equal(answer.admitted, true, what);
    assert.equal(answer.day, today, `${what}: the store's day taken`);
    assert.ok(Math.abs(answer.storeNowMs - Date.now()) < 60_000, `${what}: the store's clock answered`);
    await store.settle({
      tenant: 'd',
      ticket: `d/${what}`,
      tokensPerMinute: LIMITS.tokensPerMinute,
      used: 20,
      admitted: days(Date.now() + skew),
      ended: days(Date.now() + skew),
    });
    sum -= 30;
  }
  assert.equal(await dayTokens('d', today), sum, "one key: every replica's tokens in it");
  const ttl = Number(await raw?.pttl(`s:tenant{d}:day:${today}`));
  assert.ok(ttl > GRACE && ttl <= DAY + GRACE, `kept until an hour past the store's midnight (${ttl} ms)`);
});

test('a settle applies once per ticket; a cancel of a reserve that never arrived changes nothing', async () => {
  assert.ok(store !== undefined);
  const today = await storeToday();
  const d = days(Date.now());
  await store.reserve({ tenant: 's', ticket: 's/1', limits: LIMITS, cost: 100, days: d, force: false });
  assert.equal(await dayTokens('s', today), 100, 'reserved');
  const done = { tenant: 's', ticket: 's/1', tokensPerMinute: LIMITS.tokensPerMinute, used: 30, admitted: d, ended: d };
  assert.equal(await store.settle(done), true);
  assert.equal(await dayTokens('s', today), 30, 'settled: the tokens used');
  assert.equal(await store.settle(done), false, 'sent again (its reply lost): not applied');
  assert.equal(await dayTokens('s', today), 30, 'not twice');
  assert.equal(
    await store.settle({ ...done, ticket: 's/never', used: 0 }),
    false,
    'a cancel of a reserve that never reached the store',
  );
  assert.equal(await dayTokens('s', today), 30);
  await store.reserve({ tenant: 's', ticket: 's/2', limits: LIMITS, cost: 100, days: d, force: false });
  assert.equal(
    await store.settle({ ...done, ticket: 's/2', used: 0 }),
    true,
    'a cancel of a reserve that arrived late: given back',
  );
  assert.equal(await dayTokens('s', today), 30);
  assert.equal(Number(await raw?.hlen('s:tenant{s}:open')), 0, 'nothing left open');
});

test('a fallback batch is added once per id; the budget then refuses at the sum', async () => {
  assert.ok(store !== undefined);
  const today = await storeToday();
  const c = dayCandidates(Date.now());
  const batch = {
    tenant: 'b',
    id: 'a/run/b1',
    requestsPerMinute: 100,
    tokensPerMinute: 100_000,
    requests: 3,
    tokens: 300,
    ageMs: 0,
    graceMs: GRACE,
    days: [{ day: today, startMs: Date.parse(`${today}T00:00:00Z`), tokens: 700 }],
  };
  assert.equal(await store.rejoin(batch), true);
  assert.equal(await store.rejoin(batch), false, 'the same batch again (a retried rejoin): nothing changes');
  assert.equal(await dayTokens('b', today), 700);
  const marker = Number(await raw?.pttl('s:tenant{b}:rejoin:a/run/b1'));
  assert.ok(marker > 24 * 3_600_000, `the marker outlives the day (${marker} ms)`);
  assert.equal(
    await store.rejoin({
      ...batch,
      id: 'a/run/b2',
      days: [{ day: today, startMs: Date.parse(`${today}T00:00:00Z`), tokens: 200 }],
    }),
    true,
    'another batch is added',
  );
  assert.equal(await dayTokens('b', today), 900);
  const d = { days: c.days, startMs: c.startMs, graceMs: GRACE };
  assert.equal(
    (await store.reserve({ tenant: 'b', ticket: 'b/1', limits: LIMITS, cost: 100, days: d, force: false })).admitted,
    true,
    '900 + 100 fits 1000',
  );
  const refused = await store.reserve({ tenant: 'b', ticket: 'b/2', limits: LIMITS, cost: 1, days: d, force: false });
  assert.equal(refused.admitted, false, 'the budget is spent');
  assert.equal(refused.todayTokens, 1_000);
  const meter = (await raw?.hmget('s:tenant{b}:meter', 'ru', 'tu')) ?? [];
  assert.ok(
    Number(meter[0]) > 6.5 && Number(meter[0]) <= 7,
    `two batches' 3 requests and the reserve's 1 in the shared bucket (${meter[0]})`,
  );
  const old = { ...batch, id: 'a/run/b3', days: [{ day: '2020-01-01', startMs: Date.UTC(2020, 0, 1), tokens: 5 }] };
  assert.equal(await store.rejoin(old), true);
  assert.equal(Number(await raw?.exists('s:tenant{b}:day:2020-01-01')), 0, 'a day long over is not written');
});
