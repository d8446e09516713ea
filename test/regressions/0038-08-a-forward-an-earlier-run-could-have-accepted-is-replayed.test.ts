// Issue 38, item 8: a forward replayed after a restart was served again when its `created` was
// ahead of the receiver's clock (within max_clock_skew): only a `created` before the process
// started was refused. But a receiver takes a signature from `created - max_clock_skew` on (a
// sender's clock may be ahead), so the run before a restart could have accepted it. What must
// hold: any signature whose acceptance window began before this process started — wherever its
// `created` lies — is refused 401 `replayed`; forwards are taken again from `max_clock_skew` after
// start, and the refusal says from when. The rule is a pure function (replay-window.ts), tabled
// here, and held over HTTP across a real restart of a gateway in this process.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  acceptanceWindow,
  earlierRunCouldAccept,
  firstAcceptedCreatedMs,
  SeenForwards,
  claimFor,
  signForward,
} from '#src/mesh/forwarding/index.ts';
import { MemoryBus } from '#src/mesh/index.ts';
import { newSiteKey } from '#src/mesh/site-key-file.ts';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startGateway, startSimFleet, type GatewayUnderTest, type SimFleet } from '#test/fixtures/in-process-fleet.ts';
import { unusedPort } from '#test/fixtures/context.ts';
import { eventually, httpJson, simRequests, type JsonResponse } from '#test/fixtures/http.ts';
import { chatBody } from '#test/fixtures/gateway-state.ts';
import { JumpingClock } from '#test/fixtures/test-clocks.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { listings } from '#test/fixtures/gateway-waits.ts';

const S = 1_800_000_000_000;
const SKEW = 30_000;

test('the acceptance window and the restart rule, table', () => {
  const cases: { name: string; createdMs: number; expiresMs: number; window: [number, number]; replayed: boolean }[] = [
    {
      name: 'created before the start',
      createdMs: S - 5_000,
      expiresMs: S + 25_000,
      window: [S - 35_000, S + 25_000],
      replayed: true,
    },
    { name: 'created at the start', createdMs: S, expiresMs: S + SKEW, window: [S - SKEW, S + SKEW], replayed: true },
    {
      name: 'created skew/2 after the start: acceptable from start - skew/2',
      createdMs: S + 15_000,
      expiresMs: S + 45_000,
      window: [S - 15_000, S + 45_000],
      replayed: true,
    },
    {
      name: 'created 1 s short of start + skew',
      createdMs: S + 29_000,
      expiresMs: S + 59_000,
      window: [S - 1_000, S + 59_000],
      replayed: true,
    },
    {
      name: 'created at start + skew: acceptable from the start itself, never before',
      createdMs: S + SKEW,
      expiresMs: S + 60_000,
      window: [S, S + 60_000],
      replayed: false,
    },
    {
      name: 'created later still',
      createdMs: S + 31_000,
      expiresMs: S + 61_000,
      window: [S + 1_000, S + 61_000],
      replayed: false,
    },
    {
      name: 'a short lifetime ends the window early',
      createdMs: S + 40_000,
      expiresMs: S + 45_000,
      window: [S + 10_000, S + 45_000],
      replayed: false,
    },
    {
      name: 'a long lifetime does not stretch it past created + skew',
      createdMs: S + 40_000,
      expiresMs: S + 600_000,
      window: [S + 10_000, S + 70_000],
      replayed: false,
    },
  ];
  for (const c of cases) {
    const window = acceptanceWindow(c.createdMs, c.expiresMs, SKEW);
    assert.deepEqual([window.fromMs, window.untilMs], c.window, c.name);
    assert.equal(earlierRunCouldAccept(window, S), c.replayed, c.name);
  }
  // `created` has whole seconds: the first one taken after a start mid-second.
  assert.equal(firstAcceptedCreatedMs(S + 400, SKEW), S + 31_000);
  assert.equal(firstAcceptedCreatedMs(S, SKEW), S + SKEW);
});

test('the replay memory of a run begun at S refuses what an earlier run could have taken, naming from when it takes signatures', () => {
  const seen = new SeenForwards(S);
  const ahead = seen.claim(claimFor('a', 'n'.repeat(22), S + 15_000, S + 45_000, SKEW), S + 1_000);
  assert.equal(ahead.ok ? 'ok' : ahead.rejection, 'replayed', 'created skew/2 after the start, seen 1 s after it');
  if (!ahead.ok)
    assert.match(
      ahead.detail,
      /^acceptable from 15 s before this site started: an earlier run may have accepted it \(signatures created from 2027-01-15T08:00:30\.000Z on are taken\)$/,
    );
  assert.equal(seen.claim(claimFor('a', 'm'.repeat(22), S + SKEW, S + 60_000, SKEW), S + 1_000).ok, true, 'created start + skew');
});

// Over HTTP: site c (in this process) restarts; site a is a key whose clock runs 29 s ahead.
const keys = { a: newSiteKey(), c: newSiteKey() };
const bus = new MemoryBus();
const clock = new JumpingClock();
let port: number;
let sim: SimFleet;
let gw: GatewayUnderTest | undefined;

const FLEET =
  '[[node]]\nname = "c-gpu"\nkind = "vllm"\nmodels = ["m-c"]\ncontext = 8192\nttft = "1ms"\ntokens_per_second = 10000\n';
const BODY = Buffer.from(JSON.stringify(chatBody('m-c')));
const url = (): string => `http://127.0.0.1:${port}/v1/chat/completions`;
const config = (): string =>
  gatewayToml(
    [{ name: 'c-gpu', url: sim.url('c-gpu'), kind: 'vllm' }],
    [
      '[mesh]',
      'site = "c"',
      `url = "http://127.0.0.1:${port}"`,
      'key_file = "/unused/c.key"',
      'listen = ["/ip4/127.0.0.1/tcp/0"]',
      `max_clock_skew = "${SKEW / 1000}s"`,
      '[[mesh.sites]]',
      'id = "a"',
      `public_key = "${keys.a.publicKey}"`,
      '[[mesh.sites]]',
      'id = "c"',
      `public_key = "${keys.c.publicKey}"`,
    ].join('\n'),
    'api_keys = ["key-local"]',
  ).replace('listen = "127.0.0.1:0"', `listen = "127.0.0.1:${port}"`);

/** Site c's gateway; `replaySinceMs` 0 = no earlier run (the first), absent = the rule as it stands. */
async function startC(replaySinceMs?: number): Promise<GatewayUnderTest> {
  const started = await startGateway(config(), {
    clock,
    meshGossip: {
      key: keys.c,
      transport: (own) => bus.transport('peer-c', own.peerId),
      ...(replaySinceMs === undefined ? {} : { replaySinceMs }),
    },
  });
  await untilEvent(
    async () => (await httpJson('POST', url(), chatBody('m-c'), { authorization: 'Bearer key-local' })).status === 200,
    [listings(started)],
    'c serves m-c',
  );
  return started;
}

const signedAt = (nowMs: number): Promise<Record<string, string>> =>
  signForward({
    method: 'POST',
    url: url(),
    headers: { 'content-type': 'application/json' },
    body: BODY,
    site: 'a',
    key: keys.a,
    nowMs,
    lifetimeMs: SKEW,
  });
const send = (headers: Record<string, string>): Promise<JsonResponse> => httpJson('POST', url(), BODY, headers);
const chatsAtC = async (): Promise<number> =>
  (await simRequests(sim.url('c-gpu'))).filter((r) => r.path === '/v1/chat/completions').length;

before(async () => {
  port = await unusedPort();
  sim = await startSimFleet(FLEET);
});
after(async () => {
  await gw?.close();
  await sim?.close();
});

test('a forward created ahead of the clock, served before a restart, is refused replayed after it; forwards are taken again max_clock_skew after start', async () => {
  gw = await startC(0);
  // a's clock is 29 s ahead: c (30 s skew) takes the signature at once, and until created + skew.
  const ahead = await signedAt(clock.now() + 29_000);
  assert.equal((await send(ahead)).status, 200);
  await gw.close();
  gw = await startC();
  const served = await chatsAtC();
  // Before: its `created` lay after this run's start, so the same bytes were served again.
  const replayed = await send(ahead);
  assert.equal(replayed.status, 401, replayed.text);
  const error = replayed.json<{ error: { code: string; message: string } }>().error;
  assert.equal(error.code, 'replayed');
  assert.match(
    error.message,
    /^signature replayed: acceptable from \d+ s before this site started: an earlier run may have accepted it \(signatures created from \S+ on are taken\)$/,
  );
  assert.equal(await chatsAtC(), served, 'the node did not see it again');
  // A fresh signature made now could have been taken by a run just ended (its window opened skew ago).
  const fresh = await send(await signedAt(clock.now()));
  assert.equal(fresh.json<{ error: { code: string } }>().error.code, 'replayed', fresh.text);
  // max_clock_skew later, the rule lets fresh signatures in again (a's clock back in step).
  clock.jump(SKEW + 1_000);
  await eventually(
    async () => (await send(await signedAt(clock.now()))).status === 200,
    30_000,
    'c takes fresh forwards skew after start',
  );
  const still = await send(ahead);
  assert.equal(
    still.json<{ error: { code: string } }>().error.code,
    'replayed',
    'the old one stays refused while it could be accepted',
  );
});
