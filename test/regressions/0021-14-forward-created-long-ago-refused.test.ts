// Issue 21, item 14 (first bullet): a forwarded request `created` long ago but with `expires` still
// in the future must be refused — `created` older than max_clock_skew is too old, whatever the
// signer wrote in `expires`. The earlier test signed with expires = created + skew, so the expiry
// check alone refused it and the created-too-old check could be removed unnoticed. Here the
// replay memory takes every claim, so only the created check stands between the request and a yes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodePinnedKey, signForward, verifyForward, type VerifyContext } from '#src/mesh/forwarding/index.ts';
import { testSiteKey } from '#test/fixtures/site-keys.ts';

const NOW = 1_800_000_000_000;
const SKEW_MS = 30_000;
const key = testSiteKey();
const URL_OF_THIS_SITE = 'http://127.0.0.1:8080';
const BODY = Buffer.from('{"model":"m","messages":[]}');

const context: VerifyContext = {
  pins: new Map([['a', decodePinnedKey(key.publicKey)]]),
  nowMs: NOW,
  maxClockSkewMs: SKEW_MS,
  self: 'self',
  selfKey: undefined,
  url: URL_OF_THIS_SITE,
  replay: { hold: () => ({ ok: true }) },
};

async function signedAt(createdMs: number, lifetimeMs: number) {
  const headers = await signForward({
    method: 'POST',
    url: `${URL_OF_THIS_SITE}/v1/chat/completions`,
    headers: { 'content-type': 'application/json' },
    body: BODY,
    site: 'a',
    key,
    nowMs: createdMs,
    lifetimeMs,
  });
  return { method: 'POST', target: '/v1/chat/completions', headers: { ...headers, host: '127.0.0.1:8080' } };
}

test('created ten minutes ago, expires ten minutes from now: refused as expired, naming the age', async () => {
  const head = await signedAt(NOW - 600_000, 1_200_000);
  const verdict = await verifyForward(head, context);
  assert.equal(verdict.ok, false, 'a signature created 600 s ago is too old with max_clock_skew 30 s');
  if (!verdict.ok) {
    assert.equal(verdict.rejection, 'expired');
    assert.match(verdict.detail, /created 600 s ago/);
  }
});

test('the same long lifetime created just now is accepted (the refusal is about created, not about expires)', async () => {
  const verdict = await verifyForward(await signedAt(NOW - 1_000, 1_200_000), context);
  assert.deepEqual(verdict.ok ? verdict.site : verdict, 'a');
});
