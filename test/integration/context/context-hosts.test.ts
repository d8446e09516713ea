// GET /admin/hosts over the real wire: per node its role, what is loaded and what is only available
// on demand, and per loaded model the context figures each kind reports (router per-model /props,
// single-server /props, vLLM max_model_len, Ollama /api/ps), including the context every slot is
// guaranteed when slots share one KV pool. A node without figures reports `models: {}`, never null.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startGateway, startSimFleet, type GatewayUnderTest, type SimFleet } from '#test/fixtures/in-process-fleet.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { hostsOf, unusedPort, waitForHost } from '#test/fixtures/context.ts';
import type { HostView } from '#test/fixtures/admin-readers.ts';

const FLEET = `
[[node]]
name = "router"
kind = "llamacpp-router"

[[node.model]]
id = "r-small"
status = "loaded"
context = 4096
slots = 2

[[node.model]]
id = "r-large"
status = "loaded"
context = 16384
slots = 4

[[node.model]]
id = "r-off"
status = "unloaded"
context = 32768

[[node]]
name = "idle-router"
kind = "llamacpp-router"

[[node.model]]
id = "r-idle"
status = "unloaded"

[[node]]
name = "single"
kind = "llamacpp"
models = ["solo"]
context = 2048
slots = 4

[[node]]
name = "single-per-slot"
kind = "llamacpp"
kv = "per-slot"
models = ["solo-ps"]
context = 2048
slots = 4

[[node]]
name = "vllm"
kind = "vllm"
models = ["vl"]
context = 16384

[[node]]
name = "ollama"
kind = "ollama"

[[node.model]]
id = "oll-warm"
status = "loaded"
context = 8192

[[node.model]]
id = "oll-cold"
status = "unloaded"
context = 8192
`;

let sim: SimFleet;
let gw: GatewayUnderTest;

before(async () => {
  sim = await startSimFleet(FLEET);
  const kinds: Record<string, string> = {
    router: 'llamacpp',
    'idle-router': 'llamacpp',
    single: 'llamacpp',
    'single-per-slot': 'llamacpp',
    vllm: 'vllm',
    ollama: 'ollama',
  };
  const nodes = sim.nodes.map((n) => ({
    name: n.name,
    url: n.url,
    kind: kinds[n.name] ?? 'auto',
    kv: n.name === 'single-per-slot' ? 'per-slot' : undefined,
  }));
  nodes.push({ name: 'gone', url: `http://127.0.0.1:${await unusedPort()}`, kind: 'llamacpp', kv: undefined });
  gw = await startGateway(gatewayToml(nodes));
  const ready: Record<string, (h: HostView) => boolean> = {
    router: (h) => h.models?.['r-large'] !== undefined && h.models['r-small'] !== undefined,
    'idle-router': (h) => h.role === 'router',
    single: (h) => h.models?.solo !== undefined,
    'single-per-slot': (h) => h.models?.['solo-ps'] !== undefined,
    vllm: (h) => h.models?.vl !== undefined,
    ollama: (h) => h.models?.['oll-warm:latest'] !== undefined,
  };
  for (const [name, check] of Object.entries(ready)) await waitForHost(gw, name, check, 'capacity figures polled');
});

after(async () => {
  await gw?.close();
  await sim?.close();
});

test('a router reports per-model n_ctx, slots and the context each slot is guaranteed with unified KV', async () => {
  const router = await waitForHost(gw, 'router', (h) => h.models?.['r-large'] !== undefined, 'figures');
  assert.equal(router.role, 'router');
  assert.equal(router.kv, 'auto');
  assert.deepEqual([...router.loaded].sort(), ['r-large', 'r-small']);
  assert.deepEqual(router.available_on_demand, [{ id: 'r-off', status: 'unloaded' }]);
  // The sim router's children run with --kv-unified, and the gateway reads that from its listing.
  const unified = { mode: 'unified', source: 'router args' };
  assert.deepEqual(router.models, {
    'r-small': { n_ctx: 4096, slots: 2, guaranteed_ctx: 2048, kv: unified },
    'r-large': { n_ctx: 16384, slots: 4, guaranteed_ctx: 4096, kv: unified },
  });
});

test('a single llama-server reports its host figures; per-slot KV guarantees the whole n_ctx to every slot', async () => {
  const single = await hostOfNamed('single');
  assert.equal(single.role, 'single');
  assert.deepEqual(single.loaded, ['solo']);
  assert.deepEqual(single.models, {
    solo: { n_ctx: 2048, slots: 4, guaranteed_ctx: 512, kv: { mode: 'unified', source: 'default' } },
  });

  const perSlot = await hostOfNamed('single-per-slot');
  assert.equal(perSlot.kv, 'per-slot');
  assert.deepEqual(perSlot.models, {
    'solo-ps': { n_ctx: 2048, slots: 4, guaranteed_ctx: 2048, kv: { mode: 'per-slot', source: 'config' } },
  });
});

test('vLLM reports max_model_len and Ollama the runtime context of loaded models only, with no slot count', async () => {
  const vllm = await hostOfNamed('vllm');
  assert.deepEqual(vllm.models, { vl: { n_ctx: 16384, slots: null, guaranteed_ctx: 16384 } });

  const ollama = await hostOfNamed('ollama');
  assert.deepEqual(ollama.loaded, ['oll-warm:latest']);
  assert.deepEqual(ollama.available_on_demand, [{ id: 'oll-cold:latest', status: 'unloaded' }]);
  assert.deepEqual(ollama.models, { 'oll-warm:latest': { n_ctx: 8192, slots: null, guaranteed_ctx: 8192 } });
});

test('a node without figures reports models as an empty object, never null', async () => {
  const idle = await hostOfNamed('idle-router');
  assert.deepEqual(idle.loaded, []);
  assert.deepEqual(idle.available_on_demand, [{ id: 'r-idle', status: 'unloaded' }]);
  assert.deepEqual(idle.models, {});

  const gone = await waitForHost(gw, 'gone', (h) => h.health.status === 'dead', 'dead');
  assert.deepEqual(gone.models, {});
  assert.deepEqual(gone.loaded, []);

  const raw = (await httpJson('GET', `${gw.url}/admin/hosts`)).json<{
    hosts: { name: string; models: unknown; leases: unknown }[];
  }>();
  for (const host of raw.hosts) {
    assert.ok(
      typeof host.models === 'object' && host.models !== null && !Array.isArray(host.models),
      `${host.name}: models is an object`,
    );
    assert.ok(
      typeof host.leases === 'object' && host.leases !== null && !Array.isArray(host.leases),
      `${host.name}: leases is an object`,
    );
  }
});

test('the fleet /v1/models carries the largest loaded context and who has each model loaded or on demand', async () => {
  const list = (await httpJson('GET', `${gw.url}/v1/models`)).json<{
    data: { id: string; max_model_len: number | null; loaded: boolean; nodes: string[]; on_demand_nodes: string[] }[];
  }>();
  const byId = new Map(list.data.map((m) => [m.id, m]));
  assert.deepEqual(pick(byId.get('r-large')), { max_model_len: 16384, loaded: true, nodes: ['router'], on_demand_nodes: [] });
  assert.deepEqual(pick(byId.get('r-off')), { max_model_len: null, loaded: false, nodes: [], on_demand_nodes: ['router'] });
  assert.deepEqual(pick(byId.get('solo')), { max_model_len: 2048, loaded: true, nodes: ['single'], on_demand_nodes: [] });
  assert.deepEqual(pick(byId.get('vl')), { max_model_len: 16384, loaded: true, nodes: ['vllm'], on_demand_nodes: [] });
  assert.deepEqual(pick(byId.get('oll-cold:latest')), {
    max_model_len: null,
    loaded: false,
    nodes: [],
    on_demand_nodes: ['ollama'],
  });
});

async function hostOfNamed(name: string): Promise<HostView> {
  const found = (await hostsOf(gw.url)).hosts.find((h) => h.name === name);
  assert.ok(found !== undefined, `host ${name} listed`);
  return found;
}

function pick(
  model: { max_model_len: number | null; loaded: boolean; nodes: string[]; on_demand_nodes: string[] } | undefined,
): unknown {
  if (model === undefined) return undefined;
  return { max_model_len: model.max_model_len, loaded: model.loaded, nodes: model.nodes, on_demand_nodes: model.on_demand_nodes };
}
