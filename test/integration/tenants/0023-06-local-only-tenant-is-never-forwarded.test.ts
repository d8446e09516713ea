// Issue 23, peer sites as tenants: a tenant's `sites` limits where its requests may be forwarded.
// Before, every request could leave for any fresh site (a tool given a key could burn the paid
// peer's capacity). Now site a's tenant `local-only` (sites = []) is never forwarded: its request
// for a model only site c serves answers 503 with c excluded as `not_in_tenant_scope` (in the body
// and in /admin/explain?tenant=), and nothing reaches c; `scoped` (sites = ["c"]) and `anywhere`
// (no sites) are forwarded as before.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { httpJson, type JsonResponse } from '#test/fixtures/http.ts';
import { bearer, chatBody, metric } from '#test/fixtures/gateway-state.ts';
import { TwoSiteMesh } from '#test/fixtures/two-site-mesh.ts';
import { untilEvent } from '#test/fixtures/events.ts';

const TENANTS_A = `
[[tenants]]
name = "local-only"
keys = ["key-local-only"]
sites = []

[[tenants]]
name = "scoped"
keys = ["key-scoped"]
sites = ["c"]

[[tenants]]
name = "anywhere"
keys = ["key-anywhere"]
`;

const mesh = new TwoSiteMesh({ heartbeatMs: 200, freshnessMs: 2_000, extraToml: { a: TENANTS_A } });
const chatAtA = (key: string): Promise<JsonResponse> =>
  httpJson('POST', `${mesh.site('a').gw.url}/v1/chat/completions`, chatBody('m-c'), bearer(key));
const acceptedAtC = (): Promise<number> =>
  metric(mesh.site('c').gw.url, 'gateway_mesh_forwarded_in_total', { site: 'a', result: 'accepted' });

before(async () => {
  await mesh.start();
  // a knows c's model and forwards for a tenant that may leave: forwarding works end to end.
  await untilEvent(
    async () => (await chatAtA('key-anywhere')).status === 200,
    [...mesh.changes({ withLogs: false })],
    'a forwards m-c for a tenant without a site scope',
  );
});
after(() => mesh.close());

test('a tenant limited to local sites is never forwarded (503 naming the scope, nothing reaches the other site); tenants that may leave still do', async () => {
  // Those that may leave: one whose sites list c, one without a scope.
  const acceptedBefore = await acceptedAtC();
  for (const key of ['key-scoped', 'key-anywhere']) {
    const res = await chatAtA(key);
    assert.equal(res.status, 200, `${key}: ${res.text}`);
    assert.equal(res.headers['x-switchyard-site'], 'c');
  }
  assert.equal(await acceptedAtC(), acceptedBefore + 2);

  const before = await acceptedAtC();
  const forwardedBefore = await metric(mesh.site('a').gw.url, 'gateway_mesh_forwarded_total', { site: 'c', result: 'success' });
  for (let i = 0; i < 3; i++) {
    const res = await chatAtA('key-local-only');
    assert.equal(res.status, 503, res.text);
    const error = res.json<{ error: { message: string; sites?: { site: string; reason: string; detail?: string }[] } }>().error;
    assert.deepEqual(error.sites, [
      { site: 'c', reason: 'not_in_tenant_scope', detail: "the tenant's requests stay on this site (its sites = [])" },
    ]);
    assert.match(error.message, /remote sites: c not_in_tenant_scope/);
  }
  assert.equal(await acceptedAtC(), before, 'c accepted no forward of the local-only tenant');
  assert.equal(
    await metric(mesh.site('a').gw.url, 'gateway_mesh_forwarded_total', { site: 'c', result: 'success' }),
    forwardedBefore,
    'a sent nothing to c',
  );
});

test("explain with a tenant shows the site it may not use, with the scope's reason", async () => {
  const explain = async (query: string) =>
    (await httpJson('GET', `${mesh.site('a').gw.url}/admin/explain?model=m-c&${query}`)).json<{
      outcome: string;
      sites?: { site: string; verdict: string; reason?: string }[];
      site_choice?: string | null;
    }>();
  const scoped = await explain('tenant=local-only');
  assert.deepEqual(
    scoped.sites?.map((s) => [s.site, s.verdict, s.reason]),
    [['c', 'excluded', 'not_in_tenant_scope']],
  );
  assert.equal(scoped.site_choice, null);
  const open = await explain('tenant=anywhere');
  assert.deepEqual(
    open.sites?.map((s) => [s.site, s.verdict]),
    [['c', 'eligible']],
  );
  assert.equal(open.outcome, 'forward');
  const unknown = await httpJson('GET', `${mesh.site('a').gw.url}/admin/explain?model=m-c&tenant=nobody`);
  assert.equal(unknown.status, 400, unknown.text);
  assert.match(unknown.text, /no tenant named 'nobody'/);
});
