// Issue 27, dashboard Requests view with `[server] workers = 2`: the requests the worker threads
// serve reach the main thread's ring (their `proxy:request-finished` is bridged to the owner), so
// GET /admin/requests lists every request once, with its attempts and routing decision, whichever
// worker served it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, startSimFleet, type GatewayUnderTest, type SimFleet } from '#test/fixtures/in-process-fleet.ts';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { listings, nodeChanges, requestEnds } from '#test/fixtures/gateway-waits.ts';

interface Rec {
  request_id: string;
  status: number;
  node?: string;
  attempts: { node?: string; route?: { reason: string; scores?: unknown[] } }[];
}

let sim: SimFleet;
let gw: GatewayUnderTest;

before(async () => {
  sim = await startSimFleet('[[node]]\nname = "n"\nkind = "vllm"\nmodels = ["m"]\nttft = "1ms"\ntokens_per_second = 5000\n');
  gw = await startGateway(gatewayToml([{ name: 'n', url: sim.url('n'), kind: 'vllm' }], '', 'workers = 2'));
  const chat = { model: 'm', max_tokens: 4, messages: [{ role: 'user', content: 'hi' }] };
  await untilEvent(
    async () => (await httpJson('POST', `${gw.url}/v1/chat/completions`, chat, { 'x-request-id': 'warm' })).status === 200,
    [listings(gw)],
    'a first answer',
  );
});
after(async () => {
  await gw?.close();
  await sim?.close();
});

test("every worker's requests are in the main thread's ring, once each, with their routing", async () => {
  const chat = { model: 'm', max_tokens: 4, messages: [{ role: 'user', content: 'hi' }] };
  const ids = Array.from({ length: 8 }, (_, i) => `w-${i}`);
  const statuses = await Promise.all(
    ids.map((id) => httpJson('POST', `${gw.url}/v1/chat/completions`, chat, { 'x-request-id': id }).then((r) => r.status)),
  );
  assert.deepEqual(
    statuses,
    ids.map(() => 200),
  );
  let records: Rec[] = [];
  await untilEvent(
    async () => {
      records = (await httpJson('GET', `${gw.url}/admin/requests?limit=1000`))
        .json<{ requests: Rec[] }>()
        .requests.filter((r) => r.request_id.startsWith('w-'));
      return records.length >= ids.length;
    },
    [requestEnds(gw), nodeChanges(gw)],
    'every request in the ring',
  );
  assert.deepEqual(records.map((r) => r.request_id).sort(), [...ids].sort(), 'each once');
  for (const r of records) {
    assert.equal(r.node, 'n');
    assert.ok((r.attempts[0]?.route?.reason ?? '').length > 0, `${r.request_id}: its routing decision crossed from the worker`);
    assert.equal(r.attempts[0]?.route?.scores?.length, 1);
  }
});
