// Issue 20, item 3: a site that is briefly down turned its models into a non-retryable 404. About
// one freshness window after site c stopped, site a answered m-c with 404 model_not_found (clients
// do not retry a 404), and the first 503 said `already_tried` instead of the real failure. Now the
// first answer names the failure (c unreachable, ECONNREFUSED); once c is stale, m-c is unavailable
// — 503 + Retry-After naming c — since c listed it within REMEMBERED_MS; a model no site ever
// listed is still 404.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { httpJson } from '#test/fixtures/http.ts';
import { chatBody } from '#test/fixtures/gateway-state.ts';
import { TwoSiteMesh } from '#test/fixtures/two-site-mesh.ts';
import { untilEvent } from '#test/fixtures/events.ts';

const HEARTBEAT_MS = 200;
/** Twenty heartbeats: c's last record stays fresh at a while c shuts down, however slowly a busy machine closes it. */
const FRESHNESS_MS = 4_000;
const mesh = new TwoSiteMesh({ heartbeatMs: HEARTBEAT_MS, freshnessMs: FRESHNESS_MS });

type Sites = { site: string; reason: string; detail?: string }[];

before(async () => {
  await mesh.start();
  await mesh.waitListed('a', 'm-c', 'c');
  await mesh.waitServed('a', 'm-c');
});
after(() => mesh.close());

test('a pinned site that just stopped: the first 503 names its real failure', async () => {
  const a = mesh.site('a').gw.url;
  await mesh.stopSite('c');

  // c's record is still fresh at a: the forward fails, and the answer says how.
  const first = await httpJson('POST', `${a}/v1/chat/completions`, chatBody('m-c'));
  assert.equal(first.status, 503, first.text);
  const firstSites = first.json<{ error: { sites?: Sites } }>().error.sites;
  assert.equal(firstSites?.[0]?.site, 'c');
  assert.equal(firstSites?.[0]?.reason, 'unreachable', first.text);
  assert.match(firstSites?.[0]?.detail ?? '', /ECONNREFUSED/);
});

test('once the stopped site is stale its models are unavailable (503 + Retry-After naming it), never unknown (404)', async () => {
  const a = mesh.site('a').gw.url;

  await untilEvent(
    async () => !(await httpJson('GET', `${a}/v1/models`)).json<{ data: { id: string }[] }>().data.some((m) => m.id === 'm-c'),
    [...mesh.changes()],
    'm-c no longer listed at a (c stale)',
  );
  // Well past one freshness window: still unavailable, not unknown.
  await new Promise((resolve) => setTimeout(resolve, FRESHNESS_MS));
  const later = await httpJson('POST', `${a}/v1/chat/completions`, chatBody('m-c'));
  assert.equal(later.status, 503, later.text);
  assert.ok(Number(later.headers['retry-after']) >= 1, 'a client is told to retry');
  const error = later.json<{ error: { code: string; message: string; sites?: Sites } }>().error;
  assert.equal(error.code, 'no_healthy_node');
  assert.deepEqual(error.sites, [
    { site: 'c', reason: 'stale', detail: 'no fresh record within the freshness window; its last record listed this model' },
  ]);
  assert.match(error.message, /remote sites: c stale/);

  // A model that no site listed is unknown, as before.
  const unknown = await httpJson('POST', `${a}/v1/chat/completions`, chatBody('never-listed'));
  assert.equal(unknown.status, 404, unknown.text);
  assert.equal(unknown.json<{ error: { code: string } }>().error.code, 'model_not_found');
});
