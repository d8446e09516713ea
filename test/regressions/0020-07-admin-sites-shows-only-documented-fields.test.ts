// Issue 20, item 7: a record may carry fields this version does not know (they are signed and
// allowed, for newer publishers), but /admin/sites and the dashboard echoed whatever a remote site
// put in its models and load — text of its choosing in this site's admin answers. Now only the
// documented fields are shown (id, ctx, on_demand; in_flight, queued, slots): an allow-list.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryBus, type MemoryTransport } from '#src/mesh/index.ts';
import type { SiteRecord } from '#src/mesh/site-record.ts';
import type { SitesDocument } from '#src/mesh/sites-document.ts';
import { signRecord } from '#src/mesh/record-codec.ts';
import { newSiteKey } from '#src/mesh/site-key-file.ts';
import { gatewayToml, meshToml } from '#test/fixtures/gateway-configs.ts';
import { startFleetAndGateway, type FleetAndGateway } from '#test/fixtures/in-process-fleet.ts';
import { eventually, httpJson } from '#test/fixtures/http.ts';

const bus = new MemoryBus();
const keys = { a: newSiteKey(), b: newSiteKey() };
const MARK = 'not-a-documented-field';
let a: FleetAndGateway;
let b: MemoryTransport;

before(async () => {
  const pins = (['a', 'b'] as const).map((id) => ({ id, publicKey: keys[id].publicKey }));
  const mesh = meshToml('a', pins, { more: ['heartbeat = "200ms"', 'freshness = "5s"'] });
  const fleet = '[[node]]\nname = "a-gpu"\nkind = "vllm"\nmodels = ["m-a"]\ncontext = 8192\n';
  a = await startFleetAndGateway(fleet, (sim) => gatewayToml([{ name: 'a-gpu', url: sim.url('a-gpu'), kind: 'vllm' }], mesh), {
    meshGossip: { key: keys.a, transport: (own) => bus.transport('peer-a', own.peerId) },
  });
  b = bus.transport('peer-b', keys.b.peerId);
  await b.start();
});

after(async () => {
  await b?.stop();
  await a?.close();
});

test("a remote record's extra fields are not echoed in /admin/sites", async () => {
  const model = { id: 'm-b', ctx: 4096, on_demand: true, note: `<script>${MARK}</script>` };
  // Issued now, each time it is published (as b's heartbeat would): one record issued once turns
  // stale after the freshness window, which a busy machine can spend before a first accepts it.
  const record = (): SiteRecord => {
    const now = Date.now();
    return {
      v: 1,
      site: 'b',
      url: 'http://127.0.0.1:1/b',
      revision: now * 1024,
      issued_at: now,
      models: [model],
      load: { in_flight: 1, queued: 2, slots: 3, secret: MARK },
      banner: MARK,
    };
  };
  const doc = async (): Promise<{ text: string; json: SitesDocument }> => {
    const res = await httpJson('GET', `${a.gw.url}/admin/sites`);
    assert.equal(res.status, 200);
    return { text: res.text, json: res.json<SitesDocument>() };
  };
  await eventually(
    async () => {
      await b.publish(signRecord(record(), keys.b));
      return (await doc()).json.sites.find((s) => s.id === 'b')?.fresh === true;
    },
    60_000,
    'a accepts b',
  );
  const { text, json } = await doc();
  const row = json.sites.find((s) => s.id === 'b') ?? assert.fail('b listed');
  assert.deepEqual(row.models, [{ id: 'm-b', ctx: 4096, on_demand: true }]);
  assert.deepEqual(row.load, { in_flight: 1, queued: 2, slots: 3 });
  assert.ok(!text.includes(MARK), `no remote extra field in /admin/sites: ${text}`);
});
