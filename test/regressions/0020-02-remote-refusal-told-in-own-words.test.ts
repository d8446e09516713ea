// Issue 20, item 2: a remote site's refusal was passed through in the remote site's own words —
// its node names, its view of the mesh. Site a forwards m-c to c; c's only node resets every
// request, and c answers 502 naming c-gpu. a passed that body on as it was. Now a answers in its
// own terms: 503 + Retry-After, which sites were tried and why each failed (status and code).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { httpJson, setSimFaults } from '#test/fixtures/http.ts';
import { chatBody } from '#test/fixtures/gateway-state.ts';
import { TwoSiteMesh } from '#test/fixtures/two-site-mesh.ts';

const mesh = new TwoSiteMesh({ heartbeatMs: 200, freshnessMs: 2_000 });

before(async () => {
  await mesh.start();
  await mesh.waitListed('a', 'm-c', 'c');
  await mesh.waitServed('a', 'm-c');
});
after(() => mesh.close());

test("a site's failure reaches the client in this site's words: the sites tried and why each failed", async () => {
  const a = mesh.site('a').gw.url;
  await setSimFaults(mesh.site('c').sim.url('c-gpu'), { inference: 'reset' });
  // c itself says so in its own words (its node by name) to a client of its own.
  const atC = await httpJson('POST', `${mesh.site('c').gw.url}/v1/chat/completions`, chatBody('m-c'));
  assert.equal(atC.status, 502, atC.text);
  assert.match(atC.text, /c-gpu/);

  const res = await httpJson('POST', `${a}/v1/chat/completions`, chatBody('m-c'));
  assert.equal(res.status, 503, res.text);
  assert.doesNotMatch(res.text, /c-gpu/, "c's node names stay at c");
  assert.equal(res.headers['x-switchyard-site'], undefined, 'not an answer of site c');
  assert.ok(Number(res.headers['retry-after']) >= 1, 'retry later');
  const error = res.json<{
    error: { code: string; message: string; sites?: { site: string; reason: string; detail?: string }[] };
  }>().error;
  assert.equal(error.code, 'no_healthy_node');
  assert.deepEqual(error.sites, [{ site: 'c', reason: 'refused', detail: 'answered 502 upstream_failed' }]);
  assert.match(error.message, /remote sites: c refused/);
});
