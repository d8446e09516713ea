// least-loaded over the real wire: the load loop reads each sim node's own /metrics; a node whose
// server reports a deep waiting queue (other clients load it directly) gets little of the
// gateway's traffic; a node without readable metrics is scored by in-flight, and explain says why;
// a router is asked /metrics?model= only for loaded models.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startFleetAndGateway, type FleetAndGateway } from '#test/fixtures/in-process-fleet.ts';
import { httpJson, simRequests } from '#test/fixtures/http.ts';
import { waitForHost } from '#test/fixtures/context.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { nodeChanges } from '#test/fixtures/gateway-waits.ts';

const FLEET = `
[[node]]
name = "busy"
kind = "llamacpp"
models = ["m"]
slots = 1
ttft = "1ms"
tokens_per_second = 20

[[node]]
name = "calm"
kind = "llamacpp"
models = ["m"]
slots = 1
ttft = "1ms"
tokens_per_second = 2000

[[node]]
name = "blind"
kind = "llamacpp"
models = ["m"]
slots = 1
metrics = false
ttft = "1ms"
tokens_per_second = 2000

[[node]]
name = "router"
kind = "llamacpp-router"

[[node.model]]
id = "r-loaded"
status = "loaded"

[[node.model]]
id = "r-idle"
status = "unloaded"
`;

let fleet: FleetAndGateway;
const direct: Promise<unknown>[] = [];

before(async () => {
  fleet = await startFleetAndGateway(FLEET, (sim) =>
    gatewayToml(
      sim.nodes.map((n) => ({ name: n.name, url: n.url, kind: 'llamacpp' })),
      '[load]\ninterval = "150ms"\nstale_after = "30s"\n[routing]\npolicy = "least-loaded"\n',
    ),
  );
  for (const name of ['busy', 'calm', 'blind']) await waitForHost(fleet.gw, name, (h) => h.loaded.includes('m'), 'listed');
  await waitForHost(fleet.gw, 'router', (h) => h.role === 'router' && h.loaded.includes('r-loaded'), 'router listed');
});

after(async () => {
  await fleet.close();
  await Promise.allSettled(direct);
});

test('a node whose own metrics report a deep waiting queue gets measurably less traffic', async () => {
  // Other clients, straight to the node: one runs, five wait in its queue (~40 s of work).
  for (let i = 0; i < 6; i += 1) {
    direct.push(
      httpJson('POST', `${fleet.sim.url('busy')}/v1/chat/completions`, {
        model: 'm',
        messages: [{ role: 'user', content: 'x' }],
        max_tokens: 150,
      }).catch(() => undefined),
    );
  }
  await untilEvent(
    async () => {
      const busy = (await fleet.gw.explain('model=m')).nodes.find((n) => n.node === 'busy');
      return (busy?.score ?? 0) >= 1 + 2 * 5;
    },
    [nodeChanges(fleet.gw)],
    'the gateway to read the deep queue from busy`s /metrics',
  );
  const served: string[] = [];
  for (let i = 0; i < 20; i += 1) {
    const res = await httpJson('POST', `${fleet.gw.url}/v1/chat/completions`, {
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 2,
    });
    assert.equal(res.status, 200, res.text);
    served.push(String(res.headers['x-switchyard-node']));
    assert.match(String(res.headers['x-switchyard-route']), /^least-loaded; lowest load /);
  }
  const toBusy = served.filter((n) => n === 'busy').length;
  assert.ok(toBusy <= 2, `busy (11+ load) took ${toBusy} of 20: ${served.join(',')}`);
});

test('a node whose metrics cannot be read is scored by in-flight, and explain says why', async () => {
  const explained = await fleet.gw.explain('model=m');
  assert.equal(explained.choice?.policy, 'least-loaded');
  const blind = explained.nodes.find((n) => n.node === 'blind');
  assert.equal(blind?.note, 'load metrics unreadable: /metrics answered HTTP 501');
  assert.equal(explained.nodes.find((n) => n.node === 'calm')?.note, undefined);
  const hosts = (await fleet.gw.hosts()).hosts;
  assert.match(String((hosts.find((h) => h.name === 'blind')?.load as { error?: string } | null)?.error), /HTTP 501/);
  const calm = hosts.find((h) => h.name === 'calm')?.load;
  assert.ok(calm !== null && calm !== undefined && 'running' in calm, '/admin/hosts shows the figures read');
  assert.equal(calm.kv_usage, null, 'current llama.cpp builds export no KV gauge');
});

test('a router is asked /metrics?model= only for its loaded models, which never loads another', async () => {
  await untilEvent(
    async () => (await simRequests(fleet.sim.url('router'))).some((r) => r.path === '/metrics'),
    [fleet.sim.activity('router')],
    'a router scrape',
  );
  const scrapes = (await simRequests(fleet.sim.url('router'))).filter((r) => r.path === '/metrics');
  assert.ok(
    scrapes.every((r) => r.query['model'] === 'r-loaded'),
    JSON.stringify(scrapes.map((r) => r.query)),
  );
  const hosts = await fleet.gw.hosts();
  assert.ok(!(hosts.hosts.find((h) => h.name === 'router')?.loaded ?? []).includes('r-idle'), 'r-idle stays unloaded');
  const explained = await fleet.gw.explain('model=r-loaded');
  assert.equal(explained.nodes.find((n) => n.node === 'router')?.note, undefined, 'the router has fresh figures');
});
