// The tenant header of a forward: encoded as one RFC 8941 Item, decoded strictly, covered by the
// forward's signature — a header the signature does not cover is tampering, a covered one that
// cannot be read is 400 malformed_tenant.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  decodePinnedKey,
  decodeTenantHeader,
  encodeTenantHeader,
  signForward,
  verifyForward,
  type ForwardHead,
  type ForwardVerdict,
  type ReplayGuard,
  type VerifyContext,
} from '#src/mesh/forwarding/index.ts';
import { testSiteKey } from '#test/fixtures/site-keys.ts';

test('the header value is the name as an sf-string and the class as a token parameter', () => {
  assert.equal(encodeTenantHeader({ name: 'team-a', priority: 'interactive' }), '"team-a";class=interactive');
  assert.equal(encodeTenantHeader({ name: 'ops@b.example', priority: 'batch' }), '"ops@b.example";class=batch');
});

test('decoding: what this side sends, and what RFC 8941 allows around it, reads back; anything else is refused by name', () => {
  const ok: [string, string, string][] = [
    ['"team-a";class=interactive', 'team-a', 'interactive'],
    ['  "team-a";class=standard  ', 'team-a', 'standard'],
    ['"team-a"; class=batch', 'team-a', 'batch'],
    ['"team-a";v=2;class=batch;note="x y";flag', 'team-a', 'batch'],
    ['"team-a";class=interactive;class=batch', 'team-a', 'batch'],
  ];
  for (const [value, name, priority] of ok)
    assert.deepEqual(decodeTenantHeader(value), { ok: true, claim: { name, priority } }, value);
  const refused: [string | string[], RegExp][] = [
    ['team-a;class=interactive', /must start with a quoted tenant name/],
    ['"team-a"', /no class parameter/],
    [
      '"team-a";class="interactive"',
      /class must be one of interactive, standard, batch \(a token\), got the string "interactive"/,
    ],
    ['"team-a";class=urgent', /class must be one of .*got urgent/],
    ['"team-a";class=?1', /class must be one of/],
    ['"team-a', /not closed/],
    ['"team-a";class=batch, "team-b";class=batch', /unexpected ", "team-" where ";" or the end belongs/],
    ['"team a";class=batch', /is not a tenant name/],
    ['"";class=batch', /is not a tenant name/],
    ['"x\\n";class=batch', /escapes only/],
    ['"caf\u00e9";class=batch', /outside printable ASCII/],
    ['"team-a";Class=batch', /parameter name must start with a lower-case letter/],
    ['"team-a";class=(x)', /parameter value must be/],
    [`"${'a'.repeat(300)}";class=batch`, /longer than 256 characters/],
    [['"a";class=batch', '"b";class=batch'], /sent 2 times/],
  ];
  for (const [value, detail] of refused) {
    const verdict = decodeTenantHeader(value);
    assert.equal(verdict.ok, false, String(value));
    if (!verdict.ok) assert.match(verdict.detail, detail, String(value));
  }
});

const NOW = 1_800_000_000_000;
const keyA = testSiteKey();
const BODY = Buffer.from('{"model":"m","messages":[]}');
const ANY_ONCE: ReplayGuard = { hold: () => ({ ok: true }), claim: () => ({ ok: true }), release: () => {} };
/** The verdict without its claim (the claim's own tests are seen-forwards'). */
const judged = (v: ForwardVerdict): unknown =>
  v.ok ? { ok: v.ok, site: v.site, ...(v.tenant === undefined ? {} : { tenant: v.tenant }) } : v;

const CONTEXT: VerifyContext = {
  pins: new Map([['a', decodePinnedKey(keyA.publicKey)]]),
  nowMs: NOW,
  maxClockSkewMs: 30_000,
  self: 'self',
  selfKey: undefined,
  url: 'http://127.0.0.1:8080',
  replay: ANY_ONCE,
};

async function signed(
  tenant: { name: string; priority: 'interactive' | 'standard' | 'batch' } | undefined,
  headers: Record<string, string> = {},
): Promise<ForwardHead> {
  const out = await signForward({
    method: 'POST',
    url: 'http://127.0.0.1:8080/v1/chat/completions',
    headers: { 'content-type': 'application/json', ...headers },
    body: BODY,
    site: 'a',
    key: keyA,
    nowMs: NOW,
    lifetimeMs: 30_000,
    tenant,
  });
  return { method: 'POST', target: '/v1/chat/completions', headers: out };
}

test('a forward with a tenant covers the tenant header, and the receiver reads the claim from it', async () => {
  const head = await signed({ name: 'team-a', priority: 'interactive' });
  assert.equal(head.headers['x-switchyard-tenant'], '"team-a";class=interactive');
  assert.match(
    String(head.headers['signature-input']),
    /^sy=\("@method" "@authority" "@path" "@query" "content-digest" "x-switchyard-forwarded-by" "x-switchyard-tenant"\);/,
  );
  assert.deepEqual(judged(await verifyForward(head, CONTEXT)), {
    ok: true,
    site: 'a',
    tenant: { name: 'team-a', priority: 'interactive' },
  });
});

test('a forward without a tenant states none: no header, the components as before, and a copy from the client is dropped', async () => {
  const head = await signed(undefined, { 'x-switchyard-tenant': '"root";class=interactive' });
  assert.equal(head.headers['x-switchyard-tenant'], undefined);
  assert.match(
    String(head.headers['signature-input']),
    /^sy=\("@method" "@authority" "@path" "@query" "content-digest" "x-switchyard-forwarded-by"\);/,
  );
  assert.deepEqual(judged(await verifyForward(head, CONTEXT)), { ok: true, site: 'a' });
});

test('a tenant header changed, added or removed after signing fails the signature; a signed one that cannot be read is malformed_tenant', async () => {
  const withTenant = await signed({ name: 'team-a', priority: 'batch' });
  const without = await signed(undefined);
  const cases: [string, ForwardHead, string][] = [
    [
      'name changed',
      { ...withTenant, headers: { ...withTenant.headers, 'x-switchyard-tenant': '"team-b";class=batch' } },
      'bad_signature',
    ],
    [
      'class raised',
      { ...withTenant, headers: { ...withTenant.headers, 'x-switchyard-tenant': '"team-a";class=interactive' } },
      'bad_signature',
    ],
    [
      'added to an unsigned-tenant forward',
      { ...without, headers: { ...without.headers, 'x-switchyard-tenant': '"team-a";class=interactive' } },
      'bad_signature',
    ],
    [
      'removed',
      {
        ...withTenant,
        headers: Object.fromEntries(Object.entries(withTenant.headers).filter(([n]) => n !== 'x-switchyard-tenant')),
      },
      'bad_signature',
    ],
  ];
  for (const [name, head, rejection] of cases) {
    const verdict = await verifyForward(head, CONTEXT);
    assert.equal(verdict.ok, false, name);
    if (!verdict.ok) assert.equal(verdict.rejection, rejection, `${name}: ${verdict.detail}`);
  }
  // Signed as it stands (the sender's own fault): refused 400, naming the header's problem.
  const resigned = await signForward({
    method: 'POST',
    url: 'http://127.0.0.1:8080/v1/chat/completions',
    headers: { 'content-type': 'application/json' },
    body: BODY,
    site: 'a',
    key: keyA,
    nowMs: NOW,
    lifetimeMs: 30_000,
    tenant: { name: 'team a', priority: 'batch' },
  });
  const verdict = await verifyForward({ method: 'POST', target: '/v1/chat/completions', headers: resigned }, CONTEXT);
  assert.equal(verdict.ok, false);
  if (!verdict.ok) {
    assert.equal(verdict.rejection, 'malformed_tenant');
    assert.match(verdict.detail, /"team a" is not a tenant name/);
  }
});
