// Issue 23, keys scoped to models and peers, with [mesh]: scopes reveal nothing. Before, site a's
// /v1/models listed every fresh remote site's models whatever the tenant's `sites` scope (a
// local-only tenant was shown site c's model it can never reach), and a model outside a tenant's
// `models` scope was refused without asking the remote sites, so its 404 differed from the 404 of
// a model nobody serves in the same fleet. Now /v1/models and /v1/models/{id} list only what the
// tenant may reach, and the out-of-scope 404 is the unknown model's, header for header and byte
// for byte (request ids and dates aside).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { httpJson, type JsonResponse } from '#test/fixtures/http.ts';
import { bearer, chatBody } from '#test/fixtures/gateway-state.ts';
import { TwoSiteMesh } from '#test/fixtures/two-site-mesh.ts';
import { untilEvent } from '#test/fixtures/events.ts';

const TENANTS_A = `
[[tenants]]
name = "local-only"
keys = ["key-local-only"]
sites = []

[[tenants]]
name = "to-c"
keys = ["key-to-c"]
sites = ["c"]

[[tenants]]
name = "only-m-a"
keys = ["key-only-m-a"]
models = ["m-a"]

[[tenants]]
name = "only-m-c"
keys = ["key-only-m-c"]
# m-q: in scope, served nowhere (yet)
models = ["m-c", "m-q"]
`;

const mesh = new TwoSiteMesh({ heartbeatMs: 200, freshnessMs: 2_000, extraToml: { a: TENANTS_A } });
const atA = (method: string, path: string, key: string, body?: unknown): Promise<JsonResponse> =>
  httpJson(method, `${mesh.site('a').gw.url}${path}`, body, bearer(key));
const listed = async (key: string): Promise<string[]> =>
  (await atA('GET', '/v1/models', key))
    .json<{ data: { id: string }[] }>()
    .data.map((m) => m.id)
    .sort();

before(async () => {
  await mesh.start();
  await untilEvent(
    async () => (await atA('POST', '/v1/chat/completions', 'key-to-c', chatBody('m-c'))).status === 200,
    [...mesh.changes({ withLogs: false })],
    'a forwards m-c',
  );
});
after(() => mesh.close());

test('/v1/models lists only the models a tenant may reach: its site scope hides the sites it may not use', async () => {
  assert.deepEqual(await listed('key-to-c'), ['m-a', 'm-c']);
  assert.deepEqual(await listed('key-local-only'), ['m-a'], "a local-only tenant is not shown c's model");
  assert.deepEqual(await listed('key-only-m-a'), ['m-a']);
  assert.deepEqual(await listed('key-only-m-c'), ['m-c']);
  const hidden = await atA('GET', '/v1/models/m-c', 'key-local-only');
  const unknown = await atA('GET', '/v1/models/m-zz', 'key-local-only');
  assert.equal(hidden.status, 404, hidden.text);
  assert.equal(hidden.text.replaceAll('m-c', 'NAME'), unknown.text.replaceAll('m-zz', 'NAME'));
  assert.equal((await atA('GET', '/v1/models/m-c', 'key-to-c')).status, 200);
});

const shape = (res: JsonResponse, name: string): { status: number; headers: Record<string, unknown>; body: string } => {
  const { 'x-request-id': _id, date: _date, ...headers } = res.headers;
  return { status: res.status, headers, body: res.text.replaceAll(name, 'NAME') };
};

test("a model outside the tenant's scope is answered byte for byte as a model nobody in the fleet serves", async () => {
  // m-c is served (by site c) but outside only-m-a's models; m-q is served nowhere. Same length, so Content-Length matches too.
  const hidden = await atA('POST', '/v1/chat/completions', 'key-only-m-a', chatBody('m-c'));
  const unknown = await atA('POST', '/v1/chat/completions', 'key-only-m-a', chatBody('m-q'));
  assert.equal(hidden.status, 404, hidden.text);
  assert.deepEqual(shape(hidden, 'm-c'), shape(unknown, 'm-q'));
  // m-a is served here but outside only-m-c's models; m-q is in its scope but served nowhere: both 404s suggest the remote model in scope.
  const hiddenLocal = await atA('POST', '/v1/chat/completions', 'key-only-m-c', chatBody('m-a'));
  const unknownToo = await atA('POST', '/v1/chat/completions', 'key-only-m-c', chatBody('m-q'));
  assert.equal(hiddenLocal.status, 404, hiddenLocal.text);
  assert.match(unknownToo.text, /Closest served models: m-c\./);
  assert.deepEqual(shape(hiddenLocal, 'm-a'), shape(unknownToo, 'm-q'));
});
