// kv = "auto" (the default) over the real wire: a llama-server router's listing says per model how
// its child runs (`status.args`), and the gateway budgets by that. The b10587 case: `-c 1024 -np 2`
// without `-kvu` runs per-slot KV (n_ctx 512 per slot), so two 150-token requests run at once
// where a unified assumption (512 shared, 256 guaranteed) queued all but one.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startFleetAndGateway, type FleetAndGateway } from '#test/fixtures/in-process-fleet.ts';
import { httpJson, simStats } from '#test/fixtures/http.ts';
import { chatOfTokens, waitForHost } from '#test/fixtures/context.ts';

const router = (name: string, kv: string): string => `
[[node]]
name = "${name}"
kind = "llamacpp-router"
kv = "${kv}"
ttft = "1ms"
tokens_per_second = 500

[[node.model]]
id = "m-${name}"
status = "loaded"
context = 512
slots = 2
`;

let fleet: FleetAndGateway;

before(async () => {
  fleet = await startFleetAndGateway(router('split', 'per-slot') + router('shared', 'unified'), (sim) =>
    // The gateway's own slot holding is what this test reads: a router that queues itself would take
    // all four and queue two in its child (issue 41, docs/protocols.md §7.z5), so the gateway queues here.
    gatewayToml(
      sim.nodes.map((n) => ({ name: n.name, url: n.url, kind: 'llamacpp' })),
      '[routing]\nrouter_queue = "gateway"',
    ),
  );
  for (const name of ['split', 'shared'])
    await waitForHost(fleet.gw, name, (h) => h.models?.[`m-${name}`]?.n_ctx === 512, 'figures');
});

after(() => fleet.close());

test('/admin/hosts shows each model`s KV mode and that it came from the router args', async () => {
  const hosts = await fleet.gw.hosts();
  const split = hosts.hosts.find((h) => h.name === 'split');
  const shared = hosts.hosts.find((h) => h.name === 'shared');
  assert.equal(split?.kv, 'auto');
  assert.deepEqual(split?.models['m-split'], {
    n_ctx: 512,
    slots: 2,
    guaranteed_ctx: 512,
    kv: { mode: 'per-slot', source: 'router args' },
  });
  assert.deepEqual(shared?.models['m-shared'], {
    n_ctx: 512,
    slots: 2,
    guaranteed_ctx: 256,
    kv: { mode: 'unified', source: 'router args' },
  });
});

test('per-slot KV read from the router: 150-token requests run two at a time, as the server can', async () => {
  const url = fleet.sim.url('split');
  let peak = 0;
  let running = true;
  const sampler = (async () => {
    while (running) {
      peak = Math.max(peak, (await simStats(url))['inFlight'] ?? 0);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  })();
  const answers = await Promise.all(
    Array.from({ length: 4 }, () =>
      httpJson('POST', `${fleet.gw.url}/v1/chat/completions`, chatOfTokens('m-split', 150, { max_tokens: 300 })),
    ),
  );
  running = false;
  await sampler;
  for (const a of answers) assert.equal(a.status, 200, a.text);
  assert.equal(peak, 2, 'two requests at once on the per-slot router');
});
