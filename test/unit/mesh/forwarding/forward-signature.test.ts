import assert from 'node:assert/strict';
import type { KeyObject } from 'node:crypto';
import { test } from 'node:test';
import {
  contentDigest,
  decodePinnedKey,
  digestMatches,
  meshLinkFor,
  SeenForwards,
  signForward,
  verifyForward,
  type ForwardHead,
  type ForwardVerdict,
  type ReplayGuard,
  type VerifyContext,
} from '#src/mesh/forwarding/index.ts';
import { testSiteKey } from '#test/fixtures/site-keys.ts';

const NOW = 1_800_000_000_000;
const SKEW = 30_000;
const keyA = testSiteKey();
const keyB = testSiteKey();
const BODY = Buffer.from('{"model":"m","messages":[]}');

async function signedHead(over: { site?: string; key?: typeof keyA; nowMs?: number; url?: string } = {}): Promise<ForwardHead> {
  const url = over.url ?? 'http://127.0.0.1:8080/v1/chat/completions';
  const headers = await signForward({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json' },
    body: BODY,
    site: over.site ?? 'a',
    key: over.key ?? keyA,
    nowMs: over.nowMs ?? NOW,
    lifetimeMs: SKEW,
  });
  return { method: 'POST', target: '/v1/chat/completions', headers: { ...headers, host: '127.0.0.1:8080' } };
}

/** Takes every claim: these tests judge one verification each (replay has its own tests). */
const ANY_ONCE: ReplayGuard = { hold: () => ({ ok: true }), claim: () => ({ ok: true }), release: () => {} };
/** The verdict without its claim (the claim's own tests are seen-forwards'). */
const judged = (v: ForwardVerdict): unknown =>
  v.ok ? { ok: v.ok, site: v.site, ...(v.tenant === undefined ? {} : { tenant: v.tenant }) } : v;

const pins = (entries: [string, KeyObject][], over: Partial<VerifyContext> = {}): VerifyContext => ({
  pins: new Map(entries),
  nowMs: NOW,
  maxClockSkewMs: SKEW,
  self: 'self',
  selfKey: undefined,
  url: 'http://127.0.0.1:8080',
  replay: ANY_ONCE,
  ...over,
});
const PINNED = pins([['a', decodePinnedKey(keyA.publicKey)]]);

test('a signed forward verifies against the pinned key, with the agreed label, components and params', async () => {
  const head = await signedHead();
  const input = String(head.headers['signature-input']);
  assert.match(
    input,
    /^sy=\("@method" "@authority" "@path" "@query" "content-digest" "x-switchyard-forwarded-by"\);created=\d+;expires=\d+;nonce="[A-Za-z0-9_-]{22}";keyid="a";alg="ed25519"$/,
  );
  assert.equal(head.headers['x-switchyard-forwarded-by'], 'a');
  assert.equal(head.headers['content-digest'], contentDigest(BODY));
  assert.deepEqual(judged(await verifyForward(head, PINNED)), { ok: true, site: 'a' });
});

test('every refusal names its problem', async () => {
  const good = await signedHead();
  const without = (name: string): ForwardHead => {
    const headers = { ...good.headers };
    delete headers[name];
    return { ...good, headers };
  };
  const cases: [string, () => Promise<ForwardHead>, VerifyContext, string][] = [
    ['no forwarded-by header', async () => without('x-switchyard-forwarded-by'), PINNED, 'unsigned'],
    ['no signature', async () => without('signature'), PINNED, 'unsigned'],
    ['no signature-input', async () => without('signature-input'), PINNED, 'unsigned'],
    ['no content-digest', async () => without('content-digest'), PINNED, 'unsigned'],
    ['a site nobody pinned', async () => signedHead({ site: 'z' }), PINNED, 'unknown_site'],
    ['signed by another key (B speaking for A)', async () => signedHead({ key: keyB }), PINNED, 'bad_signature'],
    ['another path than signed', async () => ({ ...good, target: '/v1/embeddings' }), PINNED, 'bad_signature'],
    [
      'signed for another site than this one',
      async () => signedHead({ url: 'http://127.0.0.1:9/v1/chat/completions' }),
      PINNED,
      'bad_signature',
    ],
    [
      'the same, with Host naming the site it was signed for',
      async () => ({
        ...(await signedHead({ url: 'http://127.0.0.1:9/v1/chat/completions' })),
        headers: { ...(await signedHead({ url: 'http://127.0.0.1:9/v1/chat/completions' })).headers, host: '127.0.0.1:9' },
      }),
      PINNED,
      'bad_signature',
    ],
    [
      'a request-target that is not origin-form',
      async () => ({ ...good, target: '//127.0.0.1:8080/v1/chat/completions' }),
      PINNED,
      'bad_signature',
    ],
    [
      'signed as this site itself',
      async () => signedHead({ site: 'self' }),
      pins([['self', decodePinnedKey(keyA.publicKey)]]),
      'own_site',
    ],
    [
      "signed with this site's own key under another pinned id",
      async () => signedHead(),
      pins([['a', decodePinnedKey(keyA.publicKey)]], { selfKey: decodePinnedKey(keyA.publicKey) }),
      'own_site',
    ],
    [
      'a changed content-digest header',
      async () => ({ ...good, headers: { ...good.headers, 'content-digest': contentDigest(Buffer.from('x')) } }),
      PINNED,
      'bad_signature',
    ],
    [
      'forwarded-by names another pinned site than keyid',
      async () => ({ ...good, headers: { ...good.headers, 'x-switchyard-forwarded-by': 'b' } }),
      pins([
        ['a', decodePinnedKey(keyA.publicKey)],
        ['b', decodePinnedKey(keyB.publicKey)],
      ]),
      'bad_signature',
    ],
    [
      'garbage signature-input',
      async () => ({ ...good, headers: { ...good.headers, 'signature-input': 'sy=nonsense(' } }),
      PINNED,
      'bad_signature',
    ],
    ['created beyond the skew in the future', async () => signedHead({ nowMs: NOW + SKEW + 5_000 }), PINNED, 'expired'],
    ['created longer ago than the skew', async () => signedHead({ nowMs: NOW - SKEW - 5_000 }), PINNED, 'expired'],
  ];
  for (const [name, head, ctx, rejection] of cases) {
    const verdict = await verifyForward(await head(), ctx);
    assert.equal(verdict.ok, false, name);
    if (!verdict.ok) {
      assert.equal(verdict.rejection, rejection, `${name}: ${verdict.detail}`);
      assert.ok(verdict.detail.length > 0, name);
    }
  }
});

test('the content digest matches only the body it was made of', () => {
  assert.equal(digestMatches(contentDigest(BODY), BODY), true);
  assert.equal(digestMatches(`sha-512=:AAAA:, ${contentDigest(BODY)}`, BODY), true);
  assert.equal(digestMatches(contentDigest(BODY), Buffer.from('{"model":"other"}')), false);
  assert.equal(digestMatches(undefined, BODY), false);
  assert.equal(digestMatches('sha-512=:AAAA:', BODY), false);
});

test('a pinned key that does not decode is a clear error', () => {
  assert.throws(() => decodePinnedKey('short'), /not 32 bytes of base64url/);
});

test('the mesh link reads pins and skew from the config in force, decoding pins once per list', () => {
  const mesh = (sites: { id: string; publicKey: string }[], skew: number) => ({
    site: 'self',
    url: 'http://127.0.0.1:1',
    keyFile: 'k',
    listen: [],
    peers: [],
    allowedPeers: [],
    maxPeerMessagesPerSecond: 200,
    heartbeatMs: 5_000,
    freshnessMs: 15_000,
    maxModelsPerSite: 256,
    maxClockSkewMs: skew,
    maxRememberedForwards: 65_536,
    maxMessageBytes: 262_144,
    staticModels: [],
    sites,
  });
  let config: { mesh?: ReturnType<typeof mesh> } = { mesh: mesh([{ id: 'a', publicKey: keyA.publicKey }], 30_000) };
  let decoded = 0;
  const link = meshLinkFor(
    () => config,
    () => keyA,
    { sites: () => [] },
    ANY_ONCE,
    (b64) => (decoded++, decodePinnedKey(b64)),
  );
  assert.ok(link !== undefined);
  assert.deepEqual([...link.pins().keys()], ['a']);
  link.pins();
  assert.equal(decoded, 1);
  config = {
    mesh: mesh(
      [
        { id: 'a', publicKey: keyA.publicKey },
        { id: 'b', publicKey: keyB.publicKey },
      ],
      10_000,
    ),
  };
  assert.deepEqual([...link.pins().keys()], ['a', 'b']);
  assert.equal(link.maxClockSkewMs(), 10_000);
  assert.equal(link.url(), 'http://127.0.0.1:1');
  assert.equal(
    meshLinkFor(
      () => ({}),
      () => keyA,
      { sites: () => [] },
      ANY_ONCE,
    ),
    undefined,
  );
});

test("the Host header plays no part: a signature verifies against this site's url whatever Host says", async () => {
  const head = await signedHead();
  assert.deepEqual(judged(await verifyForward({ ...head, headers: { ...head.headers, host: 'elsewhere.example:1' } }, PINNED)), {
    ok: true,
    site: 'a',
  });
  const { host: _dropped, ...noHost } = head.headers;
  assert.deepEqual(judged(await verifyForward({ ...head, headers: noHost }, PINNED)), { ok: true, site: 'a' });
});

test('a site url with a path prefix: the signature covers the prefix, the request-target arrives without it', async () => {
  const head = await signedHead({ url: 'https://gw.example/site-a/v1/chat/completions' });
  assert.deepEqual(
    judged(await verifyForward(head, pins([['a', decodePinnedKey(keyA.publicKey)]], { url: 'https://gw.example/site-a/' }))),
    { ok: true, site: 'a' },
  );
  assert.equal(
    (await verifyForward(head, pins([['a', decodePinnedKey(keyA.publicKey)]], { url: 'https://gw.example/' }))).ok,
    false,
  );
});

test('a signature is good once: held at its head, a copy in flight or used is replayed, a released one can be held again, another nonce is a new signature', async () => {
  const seen = new SeenForwards(NOW - 60_000);
  const ctx = pins([['a', decodePinnedKey(keyA.publicKey)]], { replay: { hold: (c) => seen.hold(c, NOW) } });
  const head = await signedHead();
  const first = await verifyForward(head, ctx);
  assert.deepEqual(judged(first), { ok: true, site: 'a' });
  const inFlight = await verifyForward(head, ctx);
  assert.equal(inFlight.ok ? 'ok' : inFlight.rejection, 'replayed', 'a copy while the first is in flight');
  if (!inFlight.ok) assert.match(inFlight.detail, /is being used by another request now$/);
  assert.ok(first.ok);
  seen.release(first.claim);
  const retried = await verifyForward(head, ctx);
  assert.deepEqual(judged(retried), { ok: true, site: 'a' }, 'released (its request was refused before use): held again');
  assert.equal(retried.ok && seen.claim(retried.claim, NOW).ok, true, 'used once admitted');
  const again = await verifyForward(head, ctx);
  assert.equal(again.ok, false);
  if (!again.ok) assert.deepEqual([again.rejection, again.site], ['replayed', 'a']);
  const other = await verifyForward(await signedHead(), ctx);
  assert.deepEqual(judged(other), { ok: true, site: 'a' }, 'a new signature of the same request is another nonce');
  assert.equal(seen.size(), 2);
});
