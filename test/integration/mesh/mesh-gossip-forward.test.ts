// The whole federation path in one process: two gateways learn each other's models by gossip (the
// in-memory bus), and a request at A for a model only C serves is forwarded to C, signed with the
// key the mesh part loaded; when C stops, A fails closed for it within the freshness window.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { httpJson, simRequests } from '#test/fixtures/http.ts';
import { chat } from '#test/fixtures/gateway-state.ts';
import { TwoSiteMesh } from '#test/fixtures/two-site-mesh.ts';
import { untilEvent } from '#test/fixtures/events.ts';

const HEARTBEAT_MS = 200;
const FRESHNESS_MS = 600;
const mesh = new TwoSiteMesh({ heartbeatMs: HEARTBEAT_MS, freshnessMs: FRESHNESS_MS });

before(() => mesh.start());
after(() => mesh.close());

test('a model only c serves is listed at a, marked with its site, and a request for it at a is served by c', async () => {
  const a = mesh.site('a');
  const c = mesh.site('c');
  await mesh.waitListed('a', 'm-c', 'c');
  const res = await chat(a.gw.url, 'm-c');
  assert.equal(res.status, 200, res.text);
  const atC = await simRequests(c.sim.url('c-gpu'));
  assert.ok(
    atC.some((r) => r.path === '/v1/chat/completions' && r.model === 'm-c'),
    'c-gpu served it',
  );
});

test('when c stops, a fails closed for its model within the freshness window', async () => {
  const a = mesh.site('a');
  await mesh.stopSite('c');
  const stopped = Date.now();
  const freshness = async () =>
    (await httpJson('GET', `${a.gw.url}/admin/sites`))
      .json<{ sites: { id: string; fresh: boolean }[] }>()
      .sites.map((s) => [s.id, s.fresh]);
  await untilEvent(async () => JSON.stringify(await freshness()) === '[["c",false]]', [...mesh.changes()], 'c stale at a');
  const took = Date.now() - stopped;
  assert.ok(took <= FRESHNESS_MS + 3 * HEARTBEAT_MS + 500, `stale after ${took} ms`);
  await untilEvent(
    async () => {
      const list = (await httpJson('GET', `${a.gw.url}/v1/models`)).json<{ data: { id: string }[] }>();
      return !list.data.some((m) => m.id === 'm-c');
    },
    [...mesh.changes()],
    'm-c no longer listed at a',
  );
  const res = await chat(a.gw.url, 'm-c');
  assert.ok(res.status === 503 || res.status === 404, `${res.status} ${res.text}`);
});
