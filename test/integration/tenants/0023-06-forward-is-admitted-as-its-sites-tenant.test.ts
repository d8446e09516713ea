// Issue 23, peer sites as tenants: a forward states whose request it is, and the receiver admits it
// as the sending site's own tenant. Before, a forward carried no tenant and the receiver served it
// without any (a peer site's clients used its GPUs without bound). Now site a signs its request's
// tenant and class into `x-switchyard-tenant` (covered by the RFC 9421 signature); site c admits
// it as a's `[[mesh.sites]] tenant` ("peer-a", standard), capping the class at the lower of the
// two; a site with no tenant keeps the old behaviour (queued as the open default). A tenant header
// changed or added after signing fails the signature; a signed one that cannot be read is a 400
// naming the header.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { signForward } from '#src/mesh/forwarding/index.ts';
import { httpJson, setSimFaults, simRequests, type JsonResponse } from '#test/fixtures/http.ts';
import { bearer, chatBody, metric } from '#test/fixtures/gateway-state.ts';
import { TwoSiteMesh } from '#test/fixtures/two-site-mesh.ts';
import { untilEvent } from '#test/fixtures/events.ts';

const TENANTS_A = `
[[tenants]]
name = "team-a"
keys = ["key-team-a"]
priority = "interactive"

[[tenants]]
name = "nightly"
keys = ["key-nightly"]
priority = "batch"
`;

const TENANTS_C = `
[[tenants]]
name = "peer-a"
keys = ["key-peer-a"]
priority = "standard"
weight = 2
max_concurrent = 1
`;

const mesh = new TwoSiteMesh({
  heartbeatMs: 200,
  freshnessMs: 2_000,
  pinTenants: { c: { a: 'peer-a' } },
  extraToml: { a: TENANTS_A, c: TENANTS_C },
});
const chatAt = (site: 'a' | 'c', model: string, key: string): Promise<JsonResponse> =>
  httpJson('POST', `${mesh.site(site).gw.url}/v1/chat/completions`, chatBody(model), bearer(key));
const admittedAt = (site: 'a' | 'c', labels: Record<string, string>): Promise<number> =>
  metric(mesh.site(site).gw.url, 'gateway_mesh_forwarded_in_tenant_total', labels);

before(async () => {
  await mesh.start();
  await untilEvent(
    async () => (await chatAt('a', 'm-c', 'key-team-a')).status === 200,
    [...mesh.changes({ withLogs: false })],
    'a forwards m-c to c',
  );
  await untilEvent(
    async () => (await chatAt('c', 'm-a', 'key-peer-a')).status === 200,
    [...mesh.changes({ withLogs: false })],
    'c forwards m-a to a',
  );
});
after(() => mesh.close());

test("c admits a's forwards as a's site tenant, the class capped by the one a states", async () => {
  const cases: { key: string; claimed: string; queued: string }[] = [
    { key: 'key-team-a', claimed: 'interactive', queued: 'standard' },
    { key: 'key-nightly', claimed: 'batch', queued: 'batch' },
  ];
  for (const c of cases) {
    const labels = { site: 'a', tenant: 'peer-a', class: c.queued, claimed_class: c.claimed };
    const before = await admittedAt('c', labels);
    const res = await chatAt('a', 'm-c', c.key);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers['x-switchyard-site'], 'c');
    assert.equal(await admittedAt('c', labels), before + 1, `${c.key}: admitted at c as ${JSON.stringify(labels)}`);
  }
});

test('a site pinned without a tenant is served as before: the open default, the stated class only lowering it', async () => {
  const labels = { site: 'c', tenant: 'default', class: 'standard', claimed_class: 'standard' };
  const before = await admittedAt('a', labels);
  const res = await chatAt('c', 'm-a', 'key-peer-a');
  assert.equal(res.status, 200, res.text);
  assert.equal(await admittedAt('a', labels), before + 1);
});

test('a tenant header changed or added after signing fails the signature; a signed one that cannot be read is 400 naming it', async () => {
  const c = mesh.site('c').gw.url;
  const url = `${c}/v1/chat/completions`;
  const body = Buffer.from(JSON.stringify(chatBody('m-c')));
  const sign = (tenant: { name: string; priority: 'interactive' | 'standard' | 'batch' } | undefined) =>
    signForward({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json' },
      body,
      site: 'a',
      key: mesh.keys.a,
      nowMs: Date.now(),
      lifetimeMs: 30_000,
      tenant,
    });
  const served = async (): Promise<number> =>
    (await simRequests(mesh.site('c').sim.url('c-gpu'))).filter((r) => r.path === '/v1/chat/completions').length;
  const before = await served();
  const raised = { ...(await sign({ name: 'team-a', priority: 'batch' })), 'x-switchyard-tenant': '"team-a";class=interactive' };
  const added = { ...(await sign(undefined)), 'x-switchyard-tenant': '"team-a";class=interactive' };
  for (const [name, headers] of [
    ['class raised after signing', raised],
    ['header added to a forward signed without it', added],
  ] as const) {
    const res = await httpJson('POST', url, body, headers);
    assert.equal(res.status, 401, `${name}: ${res.text}`);
    assert.equal(res.json<{ error: { code: string } }>().error.code, 'bad_signature', name);
  }
  const malformed = await httpJson('POST', url, body, await sign({ name: 'team a', priority: 'batch' }));
  assert.equal(malformed.status, 400, malformed.text);
  const error = malformed.json<{ error: { code: string; param: string; message: string } }>().error;
  assert.equal(error.code, 'malformed_tenant');
  assert.equal(error.param, 'x-switchyard-tenant');
  assert.match(error.message, /^malformed x-switchyard-tenant header: tenant name "team a" is not a tenant name/);
  assert.equal(await served(), before, 'c-gpu got none of them');
  assert.equal(await metric(c, 'gateway_mesh_forwarded_in_total', { site: 'a', result: 'malformed_tenant' }), 1);
  // Signed as it stands, with a well-formed tenant, the same body is served.
  const good = await httpJson('POST', url, body, await sign({ name: 'team-a', priority: 'batch' }));
  assert.equal(good.status, 200, good.text);
});

// The site's tenant (`peer-a`, max_concurrent = 1) is what c's ledger admits a's forwards as.
test("a peer site's tenant limit holds: a's second forward while one is in flight is refused 429 at c", async () => {
  const c = mesh.site('c').gw.url;
  const url = `${c}/v1/chat/completions`;
  const gpu = mesh.site('c').sim.url('c-gpu');
  const body = Buffer.from(JSON.stringify(chatBody('m-c')));
  const sign = () =>
    signForward({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json' },
      body,
      site: 'a',
      key: mesh.keys.a,
      nowMs: Date.now(),
      lifetimeMs: 30_000,
      tenant: { name: 'team-a', priority: 'interactive' },
    });
  await setSimFaults(gpu, { inference: 'slow_headers', slowHeadersMs: 1_500 });
  try {
    const started = await simRequests(gpu);
    const first = httpJson('POST', url, body, await sign());
    // The first is in flight once c-gpu has it.
    await untilEvent(
      async () => (await simRequests(gpu)).length > started.length,
      [mesh.site('c').sim.activity('c-gpu')],
      'the first forward reached c-gpu',
    );
    const second = await httpJson('POST', url, body, await sign());
    assert.equal(second.status, 429, second.text);
    assert.equal(second.json<{ error: { code: string } }>().error.code, 'rate_limit_exceeded');
    assert.equal((await first).status, 200);
  } finally {
    await setSimFaults(gpu, { inference: 'none' });
  }
});
