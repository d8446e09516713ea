// Issue 23 item 5: with `[server] workers = 2` every tenant admission is judged by the one ledger
// in the owner thread, so each limit holds exactly however the connections spread over the
// workers: of N requests at once, exactly as many are admitted as one thread would admit.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '#src/core/clock.ts';
import { type GatewayUnderTest, type SimFleet } from '#test/fixtures/in-process-fleet.ts';
import { FAST_NODE, HELD_NODE, startTenantGateway, type TenantGateway } from '#test/fixtures/tenant-gateway.ts';
import { JumpingClock } from '#test/fixtures/test-clocks.ts';
import { eventually, httpJson, type JsonResponse } from '#test/fixtures/http.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { requestEnds } from '#test/fixtures/gateway-waits.ts';

const TENANTS = `
[[tenants]]
name = "rpm"
keys = ["sk-rpm"]
requests_per_minute = 5

[[tenants]]
name = "conc"
keys = ["sk-conc"]
max_concurrent = 2

[[tenants]]
name = "tpm"
keys = ["sk-tpm"]
tokens_per_minute = 400

[[tenants]]
name = "day"
keys = ["sk-day"]
tokens_per_day = 400
`;

let rig: TenantGateway;
const slowClock = new ManualClock();
const clock = new JumpingClock();
let gw: GatewayUnderTest;
/** The fleet of the `held` node (its activity says when a request reached it). */
let slow: SimFleet;

before(async () => {
  rig = await startTenantGateway({
    fleet: FAST_NODE,
    held: { fleet: HELD_NODE, clock: slowClock },
    extra: TENANTS,
    server: 'workers = 2',
    options: { clock },
  });
  ({ gw } = rig);
  if (rig.held === undefined) throw new Error('the tenant gateway started without its held node');
  slow = rig.held;
});

after(async () => {
  await rig?.close();
});

const chat = (key: string, model = 'm', maxTokens = 4): Promise<JsonResponse> =>
  httpJson(
    'POST',
    `${gw.url}/v1/chat/completions`,
    { model, messages: [{ role: 'user', content: 'hi' }], max_tokens: maxTokens },
    { authorization: `Bearer ${key}` },
  );

/** `n` requests at once (each on its own connection where the pool opens one), their statuses counted. */
async function burst(n: number, send: () => Promise<JsonResponse>): Promise<Record<number, number>> {
  const answers = await Promise.all(Array.from({ length: n }, send));
  const counts: Record<number, number> = {};
  for (const a of answers) counts[a.status] = (counts[a.status] ?? 0) + 1;
  return counts;
}

async function inFlight(tenant: string): Promise<number> {
  const report = (await httpJson('GET', `${gw.url}/admin/tenants`)).json<{ tenants: { name: string; inFlight: number }[] }>();
  return report.tenants.find((t) => t.name === tenant)?.inFlight ?? -1;
}

test('requests_per_minute = 5: of 16 requests at once over both workers, exactly 5 are admitted', async () => {
  assert.deepEqual(await burst(16, () => chat('sk-rpm')), { 200: 5, 429: 11 });
  const workers = (await httpJson('GET', `${gw.url}/admin/runtime`)).json<{ workers: { requests: number }[] }>().workers;
  assert.equal(workers.length, 2);
  clock.jump(60_000);
  assert.deepEqual(await burst(8, () => chat('sk-rpm')), { 200: 5, 429: 3 }, 'a minute later: five again');
});

/** Sends `n` requests for the held model at once; once `admitted` of them are in flight, lets the node answer them all. */
async function heldBurst(
  n: number,
  key: string,
  tenant: string,
  admitted: number,
  maxTokens = 4,
  seen: JsonResponse[] = [],
): Promise<Record<number, number>> {
  const held = Array.from({ length: n }, () => chat(key, 'slow', maxTokens));
  await untilEvent(
    async () => (await inFlight(tenant)) === admitted,
    [slow.activity('held'), requestEnds(gw)],
    `${admitted} in flight`,
  );
  let done = false;
  const all = Promise.all(held).then((answers) => {
    done = true;
    return answers;
  });
  await eventually(
    () => {
      slowClock.advance(500);
      return done;
    },
    60_000,
    'every answer',
  );
  const counts: Record<number, number> = {};
  for (const a of await all) counts[a.status] = (counts[a.status] ?? 0) + 1;
  seen.push(...(await all));
  await untilEvent(async () => (await inFlight(tenant)) === 0, [requestEnds(gw)], 'none in flight once answered');
  return counts;
}

test('max_concurrent = 2: of 8 requests held at once, exactly 2 are in flight, the rest 429', async () => {
  assert.deepEqual(await heldBurst(8, 'sk-conc', 'conc', 2), { 200: 2, 429: 6 });
});

test('tokens_per_minute and tokens_per_day: of reservations held at once, exactly as many as fit are admitted', async () => {
  const seen: JsonResponse[] = [];
  assert.deepEqual(await heldBurst(1, 'sk-tpm', 'tpm', 1, 50, seen), { 200: 1 });
  clock.jump(60_000);
  // Taken at admission from a full bucket: exactly one reservation.
  const cost = 400 - Number(seen[0]?.headers['x-ratelimit-remaining-tokens']);
  assert.ok(cost > 50 && cost < 200, `one reservation costs ${cost}`);
  const fit = Math.floor(400 / cost);
  assert.deepEqual(await heldBurst(10, 'sk-tpm', 'tpm', fit, 50), { 200: fit, 429: 10 - fit });
  assert.deepEqual(
    await heldBurst(10, 'sk-day', 'day', fit, 50),
    { 200: fit, 429: 10 - fit },
    "the day's budget, the same reservations",
  );
});
