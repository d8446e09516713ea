// Federation with `[server] workers = 2` at both sites, in one process: the sites learn each other by
// gossip (the in-memory bus, on the owner threads), and each request worker forwards with the key
// and the remote sites its owner pushes it, and verifies forwarded requests itself. Requests go out
// on fresh connections so the kernel spreads them over both workers; /admin/runtime's per-worker
// counts prove both took part, so no test can pass on one worker alone.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { signForward } from '#src/mesh/forwarding/index.ts';
import type { FleetAndGateway, GatewayUnderTest } from '#test/fixtures/in-process-fleet.ts';
import { eventually, httpJson, simRequests } from '#test/fixtures/http.ts';
import { postFresh, type Answer } from '#test/fixtures/fresh-connection.ts';
import { chatBody, metricValue } from '#test/fixtures/gateway-state.ts';
import { TwoSiteMesh, type SiteId } from '#test/fixtures/two-site-mesh.ts';
import { untilEvent } from '#test/fixtures/events.ts';

const HEARTBEAT_MS = 200;
const FRESHNESS_MS = 800;
const REQUESTS = 24;
const mesh = new TwoSiteMesh({ heartbeatMs: HEARTBEAT_MS, freshnessMs: FRESHNESS_MS, serverExtra: 'workers = 2' });
const { bus, keys } = mesh;
const site = (id: SiteId): FleetAndGateway => mesh.site(id);

interface WorkerRow {
  readonly worker: number;
  readonly requests: number;
  readonly forwarded: number;
  readonly forwarded_in: number;
}

async function workerRows(gw: GatewayUnderTest): Promise<WorkerRow[]> {
  const res = await httpJson('GET', `${gw.url}/admin/runtime`);
  assert.equal(res.status, 200, res.text);
  return res.json<{ workers: WorkerRow[] }>().workers;
}

/** The rows once every worker has reported (each does every second) what it did before the call. */
async function settledRows(gw: GatewayUnderTest): Promise<WorkerRow[]> {
  await new Promise((resolve) => setTimeout(resolve, 1_100));
  return workerRows(gw);
}

/** Waits for the workers' figures (reported every second) to show `field` grown on both by `since`. */
async function bothWorkersCounted(
  gw: GatewayUnderTest,
  field: 'requests' | 'forwarded' | 'forwarded_in',
  since: readonly WorkerRow[],
  total: number,
): Promise<WorkerRow[]> {
  let rows: WorkerRow[] = [];
  const grown = (row: WorkerRow): number => row[field] - (since.find((s) => s.worker === row.worker)?.[field] ?? 0);
  await eventually(
    async () => {
      rows = await workerRows(gw);
      return rows.length === 2 && rows.reduce((sum, row) => sum + grown(row), 0) === total;
    },
    5_000,
    `${total} ${field} counted over the workers`,
  );
  for (const row of rows) assert.ok(grown(row) > 0, `worker ${row.worker} took part in ${field}: ${JSON.stringify(rows)}`);
  return rows;
}

const chatsAt = async (id: SiteId): Promise<number> =>
  (await simRequests(site(id).sim.url(`${id}-gpu`))).filter((r) => r.path === '/v1/chat/completions' && r.model === `m-${id}`)
    .length;
const cGpuChats = (): Promise<number> => chatsAt('c');

before(() => mesh.start());
after(() => mesh.close());

test('[mesh] with workers = 2: a remote-only model is listed and forwarded through every worker, and answered', async () => {
  const a = site('a').gw;
  await mesh.waitListed('a', 'm-c', 'c'); // from a worker's site mirror
  // The key reaches the workers within one sync after the mesh part loaded it.
  await untilEvent(
    async () => (await postFresh(`${a.url}/v1/chat/completions`, Buffer.from(JSON.stringify(chatBody('m-c'))))).status === 200,
    [...mesh.changes({ withLogs: false })],
    'a forwards m-c',
  );
  const since = await settledRows(a);
  const forwardedMetric = async (): Promise<number> =>
    metricValue(await a.metrics(), 'gateway_mesh_forwarded_total', { site: 'c', result: 'success' });
  const metricBefore = await forwardedMetric();
  const atCBefore = await cGpuChats();
  const answers = await Promise.all(
    Array.from({ length: REQUESTS }, (_, i) =>
      postFresh(`${a.url}/v1/chat/completions`, Buffer.from(JSON.stringify(chatBody('m-c', { user: `u${i}` })))),
    ),
  );
  for (const answer of answers) assert.equal(answer.status, 200, answer.text);
  assert.equal((await cGpuChats()) - atCBefore, REQUESTS, 'c-gpu served every forwarded request');
  await bothWorkersCounted(a, 'forwarded', since, REQUESTS);
  // The workers' events reach the owner's metrics: every forward counted once.
  assert.equal((await forwardedMetric()) - metricBefore, REQUESTS);
  // Each worker has its own connections to c; /admin/runtime sums them (256 = the default max_connections per pool).
  const runtime = (await httpJson('GET', `${a.url}/admin/runtime`)).json<{
    upstream_sites: Record<string, { limit: number; connected: number }>;
  }>();
  assert.equal(runtime.upstream_sites.c?.limit, 2 * 256, JSON.stringify(runtime.upstream_sites));
  assert.ok((runtime.upstream_sites.c?.connected ?? 0) >= 2, JSON.stringify(runtime.upstream_sites));
});

test('a two-worker receiving site accepts a signed forwarded request and refuses an unsigned one (401) on either worker', async () => {
  const c = site('c').gw;
  const url = `${c.url}/v1/chat/completions`;
  const body = Buffer.from(JSON.stringify(chatBody('m-c')));
  const accepted = metricValue(await c.metrics(), 'gateway_mesh_forwarded_in_total', { site: 'a', result: 'accepted' });
  const since = await settledRows(c);
  const signed = async (): Promise<Answer> =>
    postFresh(
      url,
      body,
      await signForward({
        method: 'POST',
        url,
        headers: { 'content-type': 'application/json' },
        body,
        site: 'a',
        key: keys.a,
        nowMs: Date.now(),
        lifetimeMs: 30_000,
      }),
    );
  const answers = await Promise.all(Array.from({ length: REQUESTS }, signed));
  for (const answer of answers) assert.equal(answer.status, 200, answer.text);
  const afterSigned = await bothWorkersCounted(c, 'forwarded_in', since, REQUESTS);
  assert.equal(
    metricValue(await c.metrics(), 'gateway_mesh_forwarded_in_total', { site: 'a', result: 'accepted' }) - accepted,
    REQUESTS,
  );

  const unsigned = await Promise.all(
    Array.from({ length: REQUESTS }, () => postFresh(url, body, { 'x-switchyard-forwarded-by': 'a' })),
  );
  for (const answer of unsigned) {
    assert.equal(answer.status, 401, answer.text);
    assert.equal(JSON.parse(answer.text).error.code, 'unsigned');
  }
  const afterUnsigned = await bothWorkersCounted(c, 'forwarded_in', afterSigned, REQUESTS);
  assert.ok(metricValue(await c.metrics(), 'gateway_mesh_forwarded_in_total', { site: 'a', result: 'unsigned' }) >= REQUESTS);
  // The workers' refusals reach the owner's log, once per site and reason for the gateway as a whole.
  const refusedLines = site('c')
    .gw.logs()
    .filter((l) => String(l.msg).startsWith('forwarded request refused') && l.site === 'a' && l.reason === 'unsigned');
  assert.equal(refusedLines.length, 1, JSON.stringify(refusedLines));

  // One hop: a forwarded request for a model only a serves is not sent back to a by either worker.
  const onlyA = Buffer.from(JSON.stringify(chatBody('m-a')));
  const aGpuBefore = await chatsAt('a');
  const bounced = await Promise.all(
    Array.from({ length: REQUESTS }, async () =>
      postFresh(
        url,
        onlyA,
        await signForward({
          method: 'POST',
          url,
          headers: { 'content-type': 'application/json' },
          body: onlyA,
          site: 'a',
          key: keys.a,
          nowMs: Date.now(),
          lifetimeMs: 30_000,
        }),
      ),
    ),
  );
  for (const answer of bounced) assert.ok(answer.status === 503 || answer.status === 404, `${answer.status} ${answer.text}`);
  const rows = await bothWorkersCounted(c, 'forwarded_in', afterUnsigned, REQUESTS);
  assert.deepEqual(
    rows.map((r) => r.forwarded),
    afterUnsigned.map((r) => r.forwarded),
    'c forwarded nothing on',
  );
  assert.equal(await chatsAt('a'), aGpuBefore, 'a-gpu got nothing from c');
});

test('a site gone stale receives no forward from any worker', async () => {
  const a = site('a').gw;
  // c keeps serving HTTP; only its gossip stops reaching a, so its record ages out there.
  bus.partition(['peer-a'], ['peer-c']);
  try {
    await untilEvent(
      async () => {
        const list = (await httpJson('GET', `${a.url}/v1/models`)).json<{ data: { id: string }[] }>();
        return !list.data.some((m) => m.id === 'm-c');
      },
      [...mesh.changes()],
      'm-c no longer listed at a',
    );
    // One mirror push (100 ms) after the owner saw it stale, every worker has it stale too (settledRows waits longer).
    const since = await settledRows(a);
    const atCBefore = await cGpuChats();
    const answers = await Promise.all(
      Array.from({ length: REQUESTS }, (_, i) =>
        postFresh(`${a.url}/v1/chat/completions`, Buffer.from(JSON.stringify(chatBody('m-c', { user: `s${i}` })))),
      ),
    );
    for (const answer of answers) assert.ok(answer.status === 503 || answer.status === 404, `${answer.status} ${answer.text}`);
    assert.equal(await cGpuChats(), atCBefore, 'c-gpu got nothing once c was stale at a');
    const rows = await bothWorkersCounted(a, 'requests', since, REQUESTS);
    assert.deepEqual(
      rows.map((r) => r.forwarded),
      since.map((r) => r.forwarded),
      'no worker forwarded',
    );
  } finally {
    bus.heal();
  }
});
