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
import { eventually } from '#test/fixtures/http.ts';
import { JumpingClock } from '#test/fixtures/test-clocks.ts';
import { ForwardReceiver } from '#test/fixtures/forward-receiver.ts';
import type { GatewayUnderTest } from '#test/fixtures/in-process-fleet.ts';

const receiver = new ForwardReceiver({ mesh: ['max_clock_skew = "30s"'] });
const clock = new JumpingClock();
const MINUTE = 60_000;
let c: GatewayUnderTest;

const chatsAtC = (): Promise<number> => receiver.chatsAtC();
const signed = (createdMs: number, lifetimeMs: number): Promise<Record<string, string>> =>
  receiver.signed('a', createdMs, lifetimeMs);

before(async () => {
  await receiver.listen();
  // The gateway's clock: twenty minutes after its start, whatever a signature says was before then is no restart question.
  c = await receiver.start({ options: { clock } });
  clock.jump(20 * MINUTE);
  // The site takes forwards now: one signed just now is served.
  await eventually(
    async () => (await receiver.send(await signed(clock.now(), 30_000))).status === 200,
    30_000,
    'c takes a fresh forward',
  );
});
after(async () => {
  await c?.close();
  await receiver.close();
});

test('created ten minutes ago, expiring ten minutes from now: refused 401 expired naming its age, every time, and never served', async () => {
  const before = await chatsAtC();
  const old = await signed(clock.now() - 10 * MINUTE, 20 * MINUTE);
  for (const attempt of ['first', 'again (its replay entry would have lapsed at created + skew)']) {
    const res = await receiver.send(old);
    assert.equal(res.status, 401, `${attempt}: ${res.text}`);
    const error = res.json<{ error: { code: string; message: string } }>().error;
    assert.equal(error.code, 'expired', attempt);
    assert.match(error.message, /^signature expired: created 60\d s ago \(max_clock_skew 30 s\)$/, attempt);
  }
  assert.equal(await chatsAtC(), before, 'the node never saw it');
});
