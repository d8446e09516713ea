// The whole federation path in one process: two gateways learn each other's models by gossip (the
// in-memory bus), and a request at A for a model only C serves is forwarded to C, signed with the
// key the mesh part loaded; when C stops, A fails closed for it within the freshness window.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryBus } from '#src/mesh/index.ts';
import type { SiteKey } from '#src/mesh/site-key.ts';
import { newSiteKey } from '#src/mesh/site-key-file.ts';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startFleetAndGateway, type FleetAndGateway } from '#test/fixtures/in-process-fleet.ts';
import { eventually, httpJson, simRequests } from '#test/fixtures/http.ts';
import { chat } from '#test/fixtures/gateway-state.ts';
import { unusedPort } from '#test/fixtures/context.ts';

const HEARTBEAT_MS = 200;
const FRESHNESS_MS = 600;
const bus = new MemoryBus();
const keys: Record<'a' | 'c', SiteKey> = { a: newSiteKey(), c: newSiteKey() };
const ports: Record<'a' | 'c', number> = { a: 0, c: 0 };
const sites: Partial<Record<'a' | 'c', FleetAndGateway>> = {};

function fleet(id: 'a' | 'c'): string {
  return `
[[node]]
name = "${id}-gpu"
kind = "vllm"
models = ["m-${id}"]
context = 8192
ttft = "2ms"
tokens_per_second = 1000
`;
}

function meshToml(id: 'a' | 'c'): string {
  return [
    '[mesh]',
    `site = "${id}"`,
    `url = "http://127.0.0.1:${ports[id]}"`,
    `key_file = "/unused/${id}.key"`,
    'listen = ["/ip4/127.0.0.1/tcp/0"]',
    `heartbeat = "${HEARTBEAT_MS}ms"`,
    `freshness = "${FRESHNESS_MS}ms"`,
    ...(['a', 'c'] as const).flatMap((pin) => ['[[mesh.sites]]', `id = "${pin}"`, `public_key = "${keys[pin].publicKey}"`]),
  ].join('\n');
}

async function startSite(id: 'a' | 'c'): Promise<FleetAndGateway> {
  const site = await startFleetAndGateway(
    fleet(id),
    (sim) => gatewayToml([{ name: `${id}-gpu`, url: sim.url(`${id}-gpu`), kind: 'vllm' }], meshToml(id)).replace('listen = "127.0.0.1:0"', `listen = "127.0.0.1:${ports[id]}"`),
    { meshGossip: { key: keys[id], transport: () => bus.transport(`peer-${id}`) } },
  );
  sites[id] = site;
  return site;
}

before(async () => {
  ports.a = await unusedPort();
  ports.c = await unusedPort();
  await startSite('a');
  await startSite('c');
});

after(async () => {
  for (const site of Object.values(sites)) await site?.close();
});

test('a model only c serves is listed at a, marked with its site, and a request for it at a is served by c', async () => {
  const a = sites.a ?? assert.fail();
  const c = sites.c ?? assert.fail();
  await eventually(async () => {
    const list = (await httpJson('GET', `${a.gw.url}/v1/models`)).json<{ data: { id: string; owned_by?: string }[] }>();
    return list.data.some((m) => m.id === 'm-c' && m.owned_by === 'switchyard:c');
  }, 10_000, 'm-c listed at a');
  const res = await chat(a.gw.url, 'm-c');
  assert.equal(res.status, 200, res.text);
  const atC = await simRequests(c.sim.url('c-gpu'));
  assert.ok(atC.some((r) => r.path === '/v1/chat/completions' && r.model === 'm-c'), 'c-gpu served it');
});

test('when c stops, a fails closed for its model within the freshness window', async () => {
  const a = sites.a ?? assert.fail();
  await sites.c?.close();
  delete sites.c;
  const stopped = Date.now();
  const freshness = async () => (await httpJson('GET', `${a.gw.url}/admin/sites`)).json<{ sites: { id: string; fresh: boolean }[] }>().sites.map((s) => [s.id, s.fresh]);
  await eventually(async () => JSON.stringify(await freshness()) === '[["c",false]]', 5_000, 'c stale at a');
  const took = Date.now() - stopped;
  assert.ok(took <= FRESHNESS_MS + 3 * HEARTBEAT_MS + 500, `stale after ${took} ms`);
  await eventually(async () => {
    const list = (await httpJson('GET', `${a.gw.url}/v1/models`)).json<{ data: { id: string }[] }>();
    return !list.data.some((m) => m.id === 'm-c');
  }, 2_000, 'm-c no longer listed at a');
  const res = await chat(a.gw.url, 'm-c');
  assert.ok(res.status === 503 || res.status === 404, `${res.status} ${res.text}`);
});
