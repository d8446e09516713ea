// Issue 38, item 15 (second half): the check that refuses a forward whose `created` is older than
// max_clock_skew while its `expires` is still ahead could be removed with every test passing (the
// test signed with a lifetime equal to the skew, so the expiry check alone refused it). Such a
// forward's replay entry lapses at created + skew, so without the check it could be replayed until
// `expires`. 0021-14 holds it at verifyForward; this holds it on the request path: a forwarded
// request over HTTP, created ten minutes ago and expiring ten minutes from now, at a site that has
// been up long enough that no other rule (the restart rule of item 8) refuses it, is refused 401
// `expired` naming its age — every time it is sent — and the node never sees it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { signForward } from '#src/mesh/forwarding/index.ts';
import { MemoryBus } from '#src/mesh/index.ts';
import { newSiteKey } from '#src/mesh/site-key-file.ts';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startFleetAndGateway, type FleetAndGateway } from '#test/fixtures/in-process-fleet.ts';
import { unusedPort } from '#test/fixtures/context.ts';
import { eventually, httpJson, simRequests } from '#test/fixtures/http.ts';
import { chatBody } from '#test/fixtures/gateway-state.ts';
import { JumpingClock } from '#test/fixtures/test-clocks.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { listings } from '#test/fixtures/gateway-waits.ts';

const keys = { a: newSiteKey(), c: newSiteKey() };
const bus = new MemoryBus();
const clock = new JumpingClock();
const MINUTE = 60_000;
let port: number;
let c: FleetAndGateway;

const FLEET =
  '[[node]]\nname = "c-gpu"\nkind = "vllm"\nmodels = ["m-c"]\ncontext = 8192\nttft = "1ms"\ntokens_per_second = 10000\n';
const BODY = Buffer.from(JSON.stringify(chatBody('m-c')));
const url = (): string => `http://127.0.0.1:${port}/v1/chat/completions`;
const chatsAtC = async (): Promise<number> =>
  (await simRequests(c.sim.url('c-gpu'))).filter((r) => r.path === '/v1/chat/completions').length;
const signed = (createdMs: number, lifetimeMs: number): Promise<Record<string, string>> =>
  signForward({
    method: 'POST',
    url: url(),
    headers: { 'content-type': 'application/json' },
    body: BODY,
    site: 'a',
    key: keys.a,
    nowMs: createdMs,
    lifetimeMs,
  });

before(async () => {
  port = await unusedPort();
  c = await startFleetAndGateway(
    FLEET,
    (sim) =>
      gatewayToml(
        [{ name: 'c-gpu', url: sim.url('c-gpu'), kind: 'vllm' }],
        [
          '[mesh]',
          'site = "c"',
          `url = "http://127.0.0.1:${port}"`,
          'key_file = "/unused/c.key"',
          'listen = ["/ip4/127.0.0.1/tcp/0"]',
          'max_clock_skew = "30s"',
          '[[mesh.sites]]',
          'id = "a"',
          `public_key = "${keys.a.publicKey}"`,
          '[[mesh.sites]]',
          'id = "c"',
          `public_key = "${keys.c.publicKey}"`,
        ].join('\n'),
        'api_keys = ["key-local"]',
      ).replace('listen = "127.0.0.1:0"', `listen = "127.0.0.1:${port}"`),
    // The gateway's clock: twenty minutes after its start, whatever a signature says was before then is no restart question.
    { clock, meshGossip: { key: keys.c, transport: (own) => bus.transport('peer-c', own.peerId) } },
  );
  clock.jump(20 * MINUTE);
  await untilEvent(
    async () => (await httpJson('POST', url(), chatBody('m-c'), { authorization: 'Bearer key-local' })).status === 200,
    [listings(c.gw)],
    'c serves m-c',
  );
  // The site takes forwards now: one signed just now is served.
  await eventually(
    async () => (await httpJson('POST', url(), BODY, await signed(clock.now(), 30_000))).status === 200,
    30_000,
    'c takes a fresh forward',
  );
});
after(() => c?.close());

test('created ten minutes ago, expiring ten minutes from now: refused 401 expired naming its age, every time, and never served', async () => {
  const before = await chatsAtC();
  const old = await signed(clock.now() - 10 * MINUTE, 20 * MINUTE);
  for (const attempt of ['first', 'again (its replay entry would have lapsed at created + skew)']) {
    const res = await httpJson('POST', url(), BODY, old);
    assert.equal(res.status, 401, `${attempt}: ${res.text}`);
    const error = res.json<{ error: { code: string; message: string } }>().error;
    assert.equal(error.code, 'expired', attempt);
    assert.match(error.message, /^signature expired: created 60\d s ago \(max_clock_skew 30 s\)$/, attempt);
  }
  assert.equal(await chatsAtC(), before, 'the node never saw it');
});
