// Issue 20, item 1, with `[server] workers = 2`: a signature must be good once for the whole
// gateway, not once per worker thread — a replay on another connection may reach the other worker.
// The same signed bytes are sent at once on fresh connections (the kernel spreads them over both
// workers): one reaches the upstream, every other one is 401 `replayed`, and both workers saw some.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { signForward } from '#src/mesh/forwarding/index.ts';
import { eventually, httpJson, simRequests } from '#test/fixtures/http.ts';
import { postFresh } from '#test/fixtures/fresh-connection.ts';
import { chatBody } from '#test/fixtures/gateway-state.ts';
import { TwoSiteMesh } from '#test/fixtures/two-site-mesh.ts';
import { untilEvent } from '#test/fixtures/events.ts';

const SENDS = 12;
const mesh = new TwoSiteMesh({ heartbeatMs: 200, freshnessMs: 2_000, serverExtra: 'workers = 2' });

interface WorkerRow {
  readonly worker: number;
  readonly forwarded_in: number;
}

const workerRows = async (url: string): Promise<WorkerRow[]> =>
  (await httpJson('GET', `${url}/admin/runtime`)).json<{ workers: WorkerRow[] }>().workers;
const chatsAtC = async (): Promise<number> =>
  (await simRequests(mesh.site('c').sim.url('c-gpu'))).filter((r) => r.path === '/v1/chat/completions').length;

before(async () => {
  await mesh.start();
  const c = mesh.site('c').gw.url;
  await untilEvent(
    async () => (await postFresh(`${c}/v1/chat/completions`, chatBody('m-c'))).status === 200,
    [...mesh.changes({ withLogs: false })],
    'c serves m-c',
  );
});
after(() => mesh.close());

test('the same signed bytes sent to both workers of a site reach the upstream once', async () => {
  const c = mesh.site('c').gw.url;
  const url = `${c}/v1/chat/completions`;
  const body = Buffer.from(JSON.stringify(chatBody('m-c')));
  const headers = await signForward({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json' },
    body,
    site: 'a',
    key: mesh.keys.a,
    nowMs: Date.now(),
    lifetimeMs: 30_000,
  });
  // Every worker reports its figures each second: wait for a settled baseline.
  await new Promise((resolve) => setTimeout(resolve, 1_100));
  const since = await workerRows(c);
  const before = await chatsAtC();
  const answers = await Promise.all(Array.from({ length: SENDS }, () => postFresh(url, body, headers)));
  const statuses = answers.map((a) => a.status).sort();
  assert.deepEqual(statuses, [200, ...Array.from({ length: SENDS - 1 }, () => 401)], answers.map((a) => a.text).join('\n'));
  for (const answer of answers.filter((a) => a.status === 401))
    assert.equal(JSON.parse(answer.text).error.code, 'replayed', answer.text);
  assert.equal((await chatsAtC()) - before, 1, 'one upstream request');
  // Both workers verified some of the sends: the once-only rule held across threads.
  let rows: WorkerRow[] = [];
  const grown = (row: WorkerRow): number => row.forwarded_in - (since.find((s) => s.worker === row.worker)?.forwarded_in ?? 0);
  await eventually(
    async () => {
      rows = await workerRows(c);
      return rows.length === 2 && rows.reduce((sum, row) => sum + grown(row), 0) === SENDS;
    },
    5_000,
    `${SENDS} forwarded requests counted over the workers`,
  );
  for (const row of rows) assert.ok(grown(row) > 0, `worker ${row.worker} took part: ${JSON.stringify(rows)}`);
});
