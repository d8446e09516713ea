// Peer sites as tenants with `[server] workers = 2` at both sites: each request worker of a signs
// its request's tenant into the forward and applies the tenant's site scope, each worker of c reads
// the signed tenant and admits the forward as a's `[[mesh.sites]] tenant` — every worker from the
// config it holds. Requests go out on fresh connections so both workers take part (/admin/runtime).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { GatewayUnderTest } from '#test/fixtures/in-process-fleet.ts';
import { eventually, httpJson } from '#test/fixtures/http.ts';
import { postFresh } from '#test/fixtures/fresh-connection.ts';
import { chatBody, metricValue } from '#test/fixtures/gateway-state.ts';
import { TwoSiteMesh } from '#test/fixtures/two-site-mesh.ts';
import { untilEvent } from '#test/fixtures/events.ts';

const REQUESTS = 16;
const mesh = new TwoSiteMesh({
  heartbeatMs: 200,
  freshnessMs: 2_000,
  serverExtra: 'workers = 2',
  pinTenants: { c: { a: 'peer-a' } },
  extraToml: {
    a: '[[tenants]]\nname = "team-a"\nkeys = ["key-team-a"]\npriority = "interactive"\n\n[[tenants]]\nname = "local-only"\nkeys = ["key-local-only"]\nsites = []\n',
    c: '[[tenants]]\nname = "peer-a"\nkeys = ["key-peer-a"]\npriority = "standard"\n',
  },
});

interface WorkerRow {
  readonly worker: number;
  readonly requests: number;
  readonly forwarded_in: number;
}
const rows = async (gw: GatewayUnderTest): Promise<WorkerRow[]> =>
  (await httpJson('GET', `${gw.url}/admin/runtime`)).json<{ workers: WorkerRow[] }>().workers;

/** Waits until the workers' figures (each reports every second) show `total` more of `field`, and checks both took part. */
async function bothTookPart(
  gw: GatewayUnderTest,
  field: 'requests' | 'forwarded_in',
  since: readonly WorkerRow[],
  total: number,
): Promise<void> {
  let now: WorkerRow[] = [];
  const grown = (row: WorkerRow): number => row[field] - (since.find((s) => s.worker === row.worker)?.[field] ?? 0);
  await eventually(
    async () => {
      now = await rows(gw);
      return now.length === 2 && now.reduce((sum, row) => sum + grown(row), 0) >= total;
    },
    10_000,
    `${total} ${field} over the workers`,
  );
  for (const row of now) assert.ok(grown(row) > 0, `worker ${row.worker} took part in ${field}: ${JSON.stringify(now)}`);
}

const settled = async (gw: GatewayUnderTest): Promise<WorkerRow[]> => {
  await new Promise((resolve) => setTimeout(resolve, 1_100));
  return rows(gw);
};
const chatAtA = (key: string) =>
  postFresh(`${mesh.site('a').gw.url}/v1/chat/completions`, Buffer.from(JSON.stringify(chatBody('m-c'))), {
    authorization: `Bearer ${key}`,
  });

before(async () => {
  await mesh.start();
  await untilEvent(
    async () => (await chatAtA('key-team-a')).status === 200,
    [...mesh.changes({ withLogs: false })],
    'a forwards m-c',
  );
});
after(() => mesh.close());

test('with workers = 2, every worker signs the tenant, and every worker of the receiver admits it as the site tenant', async () => {
  const a = mesh.site('a').gw;
  const c = mesh.site('c').gw;
  const labels = { site: 'a', tenant: 'peer-a', class: 'standard', claimed_class: 'interactive' };
  const before = metricValue(await c.metrics(), 'gateway_mesh_forwarded_in_tenant_total', labels);
  const [sinceA, sinceC] = await Promise.all([settled(a), settled(c)]);
  const answers = await Promise.all(Array.from({ length: REQUESTS }, () => chatAtA('key-team-a')));
  for (const answer of answers) assert.equal(answer.status, 200, answer.text);
  await Promise.all([bothTookPart(a, 'requests', sinceA, REQUESTS), bothTookPart(c, 'forwarded_in', sinceC, REQUESTS)]);
  assert.equal(metricValue(await c.metrics(), 'gateway_mesh_forwarded_in_tenant_total', labels) - before, REQUESTS);
});

test('with workers = 2, no worker forwards a tenant limited to local sites', async () => {
  const a = mesh.site('a').gw;
  const c = mesh.site('c').gw;
  const accepted = metricValue(await c.metrics(), 'gateway_mesh_forwarded_in_total', { site: 'a', result: 'accepted' });
  const since = await settled(a);
  const answers = await Promise.all(Array.from({ length: REQUESTS }, () => chatAtA('key-local-only')));
  for (const answer of answers) {
    assert.equal(answer.status, 503, answer.text);
    assert.deepEqual(
      JSON.parse(answer.text).error.sites.map((s: { site: string; reason: string }) => [s.site, s.reason]),
      [['c', 'not_in_tenant_scope']],
    );
  }
  await bothTookPart(a, 'requests', since, REQUESTS);
  assert.equal(
    metricValue(await c.metrics(), 'gateway_mesh_forwarded_in_total', { site: 'a', result: 'accepted' }),
    accepted,
    'c accepted none',
  );
});
