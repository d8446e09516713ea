// Issue 23 items 3–4, 6: a tenant's limits — in flight, requests and tokens per minute, tokens per
// UTC day — answer 429 in OpenAI's shape with OpenAI's headers, in the order concurrency → request
// rate → token rate → daily budget; successful answers carry the same x-ratelimit-* headers; a
// reload keeps every counter; /admin/tenants and /metrics show it. Through the real HTTP interface
// with the official openai client. The gateway's clock jumps (JumpingClock) so that a bucket
// refills or a day passes when the test says so; the one test of the client's own retry uses the
// real clock and a limit that refills within about a second.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI, { APIError, RateLimitError } from 'openai';
import { ManualClock } from '#src/core/clock.ts';
import { startGateway, type GatewayUnderTest, type SimFleet } from '#test/fixtures/in-process-fleet.ts';
import { FAST_NODE, HELD_NODE, startTenantGateway, type TenantGateway } from '#test/fixtures/tenant-gateway.ts';
import { gatewayConfig, metric, modelState, waitForNode } from '#test/fixtures/gateway-state.ts';
import { JumpingClock } from '#test/fixtures/test-clocks.ts';
import { eventually, httpJson } from '#test/fixtures/http.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { requestEnds } from '#test/fixtures/gateway-waits.ts';

const TENANTS = `
[[tenants]]
name = "rpm"
keys = ["sk-rpm"]
requests_per_minute = 3

[[tenants]]
name = "conc"
keys = ["sk-conc"]
max_concurrent = 1

[[tenants]]
name = "tpm"
keys = ["sk-tpm"]
tokens_per_minute = 100

[[tenants]]
name = "day"
keys = ["sk-day"]
tokens_per_day = 100

[[tenants]]
name = "free"
keys = ["sk-free"]
`;

let rig: TenantGateway;
let sim: SimFleet;
/** The fleet of the `held` node (its activity says when a request reached it). */
let slow: SimFleet;
/** The `held` node's clock: it answers nothing until the test moves it (a request held in flight). */
const slowClock = new ManualClock();
// Noon UTC today: the tests' jumps (minutes, then to the next day) never cross midnight by chance of
// when the suite runs (at 23:5x UTC, ten minutes' jump began a new day and reset the daily budget).
const today = new Date();
const clock = new JumpingClock(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate(), 12));
let gw: GatewayUnderTest;
let config: string;

before(async () => {
  rig = await startTenantGateway({
    fleet: FAST_NODE,
    held: { fleet: HELD_NODE, clock: slowClock },
    extra: TENANTS,
    options: { clock },
  });
  ({ sim, gw, config } = rig);
  if (rig.held === undefined) throw new Error('the tenant gateway started without its held node');
  slow = rig.held;
});

after(async () => {
  await rig?.close();
});

const client = (apiKey: string, maxRetries = 0): OpenAI =>
  new OpenAI({ baseURL: `${gw.url}/v1`, apiKey, maxRetries, timeout: 30_000 });
const chat = (apiKey: string, extra: { model?: string; max_tokens?: number } = {}) =>
  client(apiKey)
    .chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }], max_tokens: 4, ...extra })
    .withResponse();

async function limited(apiKey: string, extra: { model?: string; max_tokens?: number } = {}): Promise<RateLimitError> {
  try {
    await chat(apiKey, extra);
  } catch (error) {
    assert.ok(error instanceof RateLimitError, `expected a 429, got ${String(error)}`);
    return error;
  }
  assert.fail('the request was admitted');
}

test("the N+1th request in a minute: 429 rate_limit_exceeded with OpenAI's headers; answers before it carry the same headers", async () => {
  const remaining: string[] = [];
  for (let i = 0; i < 3; i++) {
    const { response } = await chat('sk-rpm');
    assert.equal(response.headers.get('x-ratelimit-limit-requests'), '3');
    remaining.push(String(response.headers.get('x-ratelimit-remaining-requests')));
    assert.match(String(response.headers.get('x-ratelimit-reset-requests')), /^\d+(\.\d+)?(ms|s)$|^\d+m\d+(\.\d+)?s$/);
  }
  assert.deepEqual(remaining, ['2', '1', '0']);
  const error = await limited('sk-rpm');
  assert.equal(error.status, 429);
  assert.deepEqual(Object.keys(error.error as object).sort(), ['code', 'message', 'param', 'type']);
  assert.equal(error.code, 'rate_limit_exceeded');
  assert.equal(error.type, 'requests');
  assert.equal(error.param, null);
  assert.match(error.message, /tenant 'rpm' on requests per minute/);
  assert.ok(!error.message.includes('sk-rpm'), 'the message never names the key');
  const h = error.headers;
  assert.equal(h.get('x-ratelimit-limit-requests'), '3');
  assert.equal(h.get('x-ratelimit-remaining-requests'), '0');
  const wait = Number(h.get('retry-after-ms'));
  assert.ok(wait > 0 && wait <= 20_000, `retry-after-ms ${wait}`);
  assert.equal(h.get('retry-after'), String(Math.ceil(wait / 1000)));
  assert.match(String(h.get('x-ratelimit-reset-requests')), /^\d+(\.\d+)?s$/);
  clock.jump(wait);
  const { response } = await chat('sk-rpm');
  assert.equal(response.status, 200, 'admitted once the bucket has room again');
  assert.equal(await metric(gw.url, 'gateway_tenant_limited_total', { tenant: 'rpm', reason: 'requests' }), 1);
  assert.equal(await metric(gw.url, 'gateway_tenant_requests_total', { tenant: 'rpm', model: 'm', outcome: 'limited' }), 1);
  assert.equal(await metric(gw.url, 'gateway_tenant_requests_total', { tenant: 'rpm', model: 'm', outcome: 'ok' }), 4);
  clock.jump(60_000);
});

test('max_concurrent counts a request from admission to the end of its answer', async () => {
  const first = chat('sk-conc', { model: 'slow' });
  await untilEvent(
    async () => (await tenantReport('conc')).inFlight === 1,
    [slow.activity('held')],
    'the first request in flight',
  );
  const error = await limited('sk-conc', { model: 'slow' });
  assert.equal(error.type, 'requests');
  assert.match(error.message, /requests in flight \(max_concurrent\): limit 1, used 1/);
  assert.equal(await metric(gw.url, 'gateway_tenant_limited_total', { tenant: 'conc', reason: 'concurrency' }), 1);
  // The held node answers once its clock moves; the tenant's slot is free once the answer has ended.
  const done = first.then(() => true);
  await eventually(
    async () => {
      slowClock.advance(500);
      return Promise.race([done, new Promise<boolean>((r) => setTimeout(() => r(false), 20))]);
    },
    30_000,
    'the first answer',
  );
  await untilEvent(async () => (await tenantReport('conc')).inFlight === 0, [requestEnds(gw)], 'settled');
  const next = chat('sk-conc', { model: 'slow' });
  await eventually(
    async () => {
      slowClock.advance(500);
      return Promise.race([next.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 20))]);
    },
    30_000,
    'the next answer',
  );
});

test('tokens per minute: the reservation (prompt estimate + max_tokens) is judged; a request larger than the limit is told not to retry', async () => {
  const { response } = await chat('sk-tpm', { max_tokens: 50 });
  assert.equal(response.headers.get('x-ratelimit-limit-tokens'), '100');
  assert.ok(Number(response.headers.get('x-ratelimit-remaining-tokens')) < 50, 'the reservation is taken at admission');
  const error = await limited('sk-tpm', { max_tokens: 50 });
  assert.equal(error.type, 'tokens');
  assert.match(error.message, /tenant 'tpm' on tokens per minute/);
  assert.ok(Number(error.headers.get('retry-after-ms')) > 0);
  const tooLarge = await limited('sk-tpm', { max_tokens: 500 });
  assert.equal(tooLarge.headers.get('x-should-retry'), 'false');
  assert.equal(tooLarge.headers.get('retry-after'), null);
  assert.match(tooLarge.message, /larger than the limit itself/);
  clock.jump(60_000);
  assert.equal((await chat('sk-tpm', { max_tokens: 50 })).response.status, 200, 'a minute later the bucket is full again');
});

test('tokens per day: the budget holds across minutes, answers 429 tokens until the next UTC day, and is not retried in vain', async () => {
  assert.equal((await chat('sk-day', { max_tokens: 50 })).response.status, 200);
  const error = await limited('sk-day', { max_tokens: 50 });
  assert.equal(error.type, 'tokens');
  assert.match(error.message, /tokens per day \(tokens_per_day\)/);
  clock.jump(10 * 60_000);
  const still = await limited('sk-day', { max_tokens: 50 });
  if (Number(still.headers.get('retry-after-ms')) > 60_000) assert.equal(still.headers.get('x-should-retry'), 'false');
  const report = await tenantReport('day');
  assert.ok(report.remaining.budget !== null && report.remaining.budget < 50);
  assert.equal(report.today.requests, 1);
  clock.jump(Number(still.headers.get('retry-after-ms')));
  assert.equal((await chat('sk-day', { max_tokens: 50 })).response.status, 200, 'a new day, a new budget');
});

test('a reload keeps every counter; a changed limit applies at once', async () => {
  for (let i = 0; i < 3; i++) await chat('sk-rpm');
  await limited('sk-rpm');
  assert.deepEqual(await gw.reload(config.replace('name = "free"', 'name = "free"\nweight = 2')), { ok: true });
  await limited('sk-rpm');
  assert.deepEqual(await gw.reload(config.replace('requests_per_minute = 3', 'requests_per_minute = 4')), { ok: true });
  assert.equal((await chat('sk-rpm')).response.status, 200, 'the fourth of a limit of four');
  const error = await limited('sk-rpm');
  assert.equal(error.headers.get('x-ratelimit-limit-requests'), '4');
  assert.deepEqual(await gw.reload(config), { ok: true });
  clock.jump(60_000);
});

test('a tenant without limits: no x-ratelimit headers, counted in /admin/tenants and the metrics', async () => {
  const { response } = await chat('sk-free');
  assert.equal(response.headers.get('x-ratelimit-limit-requests'), null);
  const report = await tenantReport('free');
  assert.equal(report.today.requests, 1);
  assert.deepEqual(report.limits, { maxConcurrent: null, requestsPerMinute: null, tokensPerMinute: null, tokensPerDay: null });
  assert.deepEqual(report.remaining, { requests: null, tokens: null, budget: null });
  assert.equal(await metric(gw.url, 'gateway_tenant_requests_total', { tenant: 'free', model: 'm', outcome: 'ok' }), 1);
  assert.equal(await metric(gw.url, 'gateway_tenant_in_flight', { tenant: 'free' }), 0);
});

test("the openai client's own retry waits exactly enough (real clock, a limit that refills within a second)", async () => {
  const real = await startGateway(
    gatewayConfig({
      health: { interval: '100ms', timeout: '5s', failThreshold: 2 },
      discovery: { interval: '100ms', timeout: '5s' },
      nodes: [{ name: 'fast', url: sim.url('fast'), kind: 'vllm' }],
      extra: '[[tenants]]\nname = "burst"\nkeys = ["sk-burst"]\nrequests_per_minute = 60\n',
    }),
  );
  try {
    await waitForNode(real, 'fast', modelState('known'), 'known');
    const once = new OpenAI({ baseURL: `${real.url}/v1`, apiKey: 'sk-burst', maxRetries: 0, timeout: 30_000 });
    let admitted = 0;
    let refusal: APIError | undefined;
    // 60 a minute refill one a second: the burst empties the bucket, then a request within that second is refused.
    for (let i = 0; i < 400 && refusal === undefined; i++) {
      try {
        await once.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 });
        admitted += 1;
      } catch (error) {
        assert.ok(error instanceof RateLimitError, String(error));
        refusal = error;
      }
    }
    assert.ok(refusal !== undefined && admitted >= 60, `refused after ${admitted}`);
    const waitMs = Number(refusal.headers?.get('retry-after-ms'));
    assert.ok(waitMs > 0 && waitMs <= 1_000, `retry-after-ms ${waitMs}`);
    let attempts = 0;
    const counting = new OpenAI({
      baseURL: `${real.url}/v1`,
      apiKey: 'sk-burst',
      maxRetries: 2,
      timeout: 30_000,
      fetch: (input, init) => {
        attempts += 1;
        return fetch(input, init);
      },
    });
    const started = Date.now();
    // Empty the bucket again, so the client's first attempt meets the limit and its own retry must wait.
    // On a busy machine the bucket may refill (one a second) before that first attempt arrives: then
    // nothing was retried, and the round is tried again.
    for (let round = 0; round < 5 && attempts < 2; round++) {
      for (;;) {
        try {
          await once.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 });
        } catch {
          break;
        }
      }
      attempts = 0;
      const answer = await counting.chat.completions.create({
        model: 'm',
        messages: [{ role: 'user', content: 'hi' }],
        max_tokens: 2,
      });
      assert.equal(answer.model, 'm');
    }
    assert.ok(attempts >= 2 && attempts <= 3, `the client retried after the reset (${attempts} attempts)`);
    assert.ok(Date.now() - started < 30_000);
  } finally {
    await real.close();
  }
});

interface TenantView {
  inFlight: number;
  today: { requests: number; promptTokens: number; completionTokens: number };
  remaining: { requests: number | null; tokens: number | null; budget: number | null };
  limits: Record<string, number | null>;
}

async function tenantReport(name: string): Promise<TenantView> {
  const report = (await httpJson('GET', `${gw.url}/admin/tenants`)).json<{ tenants: (TenantView & { name: string })[] }>();
  const found = report.tenants.find((t) => t.name === name);
  assert.ok(found, `tenant ${name} in /admin/tenants`);
  return found;
}
