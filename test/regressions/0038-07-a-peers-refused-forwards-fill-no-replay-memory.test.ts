// Issue 38, item 7: one peer could fill every site's forward replay memory. The memory (65,536
// signatures) was shared by all sites, and a forward's signature was remembered when its head was
// verified — before the sending site's tenant limits were checked: a peer held to 5 requests/min
// had 5,000 signatures remembered in 12.5 s (4,999 refused 429), and at ~1,100/s the memory filled
// and every site's forwards were refused 503. What must hold: a forward's signature is used up only
// once its site's tenant admitted it (a forward refused for its limits costs no entry, and can be
// sent again once there is room), and each pinned site has its own share of the memory
// (`[mesh] max_remembered_forwards` split over the remote sites): a site filling its share has its
// own new forwards refused 429 `replay_memory_full`, and the other sites' forwards are served.
// Site c runs in process; sites a and b are only keys (their forwards are signed here). c's wall
// clock stands still (StillClock) and the forwards are signed at its time: however long the flood
// takes on a loaded machine, a's per-minute bucket gains nothing back and no remembered signature
// lapses (each is kept until created + max_clock_skew), so the counts are the same at any speed.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { type JsonResponse } from '#test/fixtures/http.ts';
import { metric } from '#test/fixtures/gateway-state.ts';
import { ForwardReceiver } from '#test/fixtures/forward-receiver.ts';
import type { GatewayUnderTest } from '#test/fixtures/in-process-fleet.ts';
import { StillClock } from '#test/fixtures/test-clocks.ts';

/** The flood: forwards a sends as fast as c answers, ten at a time (bounded; judged by counts; fewer in flight than its share holds). */
const FLOOD = 1_000;
const BATCH = 10;
/** All sites' entries together; two remote sites pinned (a, b): 20 each. */
const CAPACITY = 40;
const SHARE = 20;
/** a's tenant limit during the flood. */
const RPM = 5;

const tenants = (rpm: number): string =>
  [
    '[[tenants]]',
    'name = "peer-a"',
    'keys = ["key-peer-a"]',
    `requests_per_minute = ${rpm}`,
    '[[tenants]]',
    'name = "local"',
    'keys = ["key-local"]',
  ].join('\n');
const receiver = new ForwardReceiver({
  peers: [{ id: 'a', tenant: 'peer-a' }, { id: 'b' }],
  mesh: [`max_remembered_forwards = ${CAPACITY}`],
  extra: tenants(RPM),
  server: '',
});
const clock = new StillClock();
let c: GatewayUnderTest;

/** A forward from `site`, signed at c's time with a fresh nonce. */
const signedBy = (site: 'a' | 'b'): Promise<Record<string, string>> => receiver.signed(site, clock.now(), 30_000);
const send = (headers: Record<string, string>): Promise<JsonResponse> => receiver.send(headers);
const codeOf = (res: JsonResponse): string =>
  res.status === 200 ? '200' : `${res.status} ${res.json<{ error: { code: string } }>().error.code}`;
const remembered = (site: string): Promise<number> => metric(c.url, 'gateway_mesh_replay_remembered', { site });

before(async () => {
  await receiver.listen();
  // No earlier run of this site: its forwards are taken at once (item 8's rule has its own test).
  c = await receiver.start({ replaySinceMs: 0, options: { clock } });
});
after(async () => {
  await c?.close();
  await receiver.close();
});

test("a site filling its own share is refused 429 replay_memory_full for its own new forwards; another site's are served", async () => {
  const served: string[] = [];
  for (let i = 0; i < SHARE; i++) served.push(codeOf(await send(await signedBy('b'))));
  assert.deepEqual(served, Array(SHARE).fill('200'), "b's forwards within its share are served");
  const over = await send(await signedBy('b'));
  assert.equal(codeOf(over), '429 replay_memory_full', over.text);
  assert.equal(await remembered('b'), SHARE);
  assert.match(
    over.json<{ error: { message: string } }>().error.message,
    /^too many forwarded requests to check for replay: site 'b' has 20 forwarded requests remembered for replay checks, its share of the 40/,
  );
  assert.ok(Number(over.headers['retry-after']) >= 1, 'with Retry-After');
  const other = await send(await signedBy('a'));
  assert.equal(codeOf(other), '200', `a is not touched by b's full share: ${other.text}`);
  assert.equal(await metric(c.url, 'gateway_mesh_replay_share', {}), SHARE);
});

test('a peer held to 5 requests/min floods 1,000 signed forwards: only those its tenant admitted are remembered, and a refused one can be sent again', async () => {
  const before = await remembered('a');
  const codes = new Map<string, number>();
  let lastRefused: Record<string, string> | undefined;
  for (let sent = 0; sent < FLOOD; sent += BATCH) {
    const heads = await Promise.all(Array.from({ length: BATCH }, () => signedBy('a')));
    const answers = await Promise.all(heads.map((h) => send(h)));
    answers.forEach((res, i) => {
      const code = codeOf(res);
      codes.set(code, (codes.get(code) ?? 0) + 1);
      if (code === '429 rate_limit_exceeded') lastRefused = heads[i];
    });
  }
  const served = codes.get('200') ?? 0;
  const limited = codes.get('429 rate_limit_exceeded') ?? 0;
  assert.equal(served + limited, FLOOD, `every forward is served or limited: ${JSON.stringify([...codes])}`);
  // a's minute (c's clock stands still) holds RPM admissions: the forward of the test before and the flood's.
  assert.equal(
    before + served,
    RPM,
    `a's tenant admits its ${RPM} of the minute, whatever the flood's pace (${limited} refused)`,
  );
  // A refused forward used nothing up: once its tenant has room (a reload raises the limit), the
  // very same signed request is served — before, it was refused 401 replayed.
  assert.ok(lastRefused !== undefined);
  assert.deepEqual(await c.reload(receiver.config(1, tenants(1_000))), { ok: true });
  const again = await send(lastRefused);
  assert.equal(codeOf(again), '200', again.text);
  const replayed = await send(lastRefused);
  assert.equal(codeOf(replayed), '401 replayed', 'and once served, it is used');
  // Before: every verified signature was remembered (1,000 here), whatever its tenant answered.
  assert.equal((await remembered('a')) - before, served + 1, 'remembered: the served forwards only');
  assert.ok((await remembered('a')) <= SHARE);
});
