// Issue 38, item 12: the dashboard's Models view, `switchyard models` and GET /admin/models listed a
// dead node as serving (long after its listing expired: "served now by vllm-1, vllm-2, vllm-3"),
// while /v1/models was right. What must hold: one meaning of "serving now" (nodes/serving-now.ts)
// everywhere — /v1/models, /admin/models (and the CLI that prints it) and the dashboard's model
// table: the dead node serves nothing; /admin/models names it apart (`unavailable_on`), and it
// serves again once it is back.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { runModels } from '#src/cli/models.ts';
import { HangupRelay } from '#src/cli/hangups.ts';
import { startFleetAndGateway, type FleetAndGateway } from '#test/fixtures/in-process-fleet.ts';
import { gatewayConfig, modelState, waitForNode } from '#test/fixtures/gateway-state.ts';
import { httpJson, setSimFaults } from '#test/fixtures/http.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { nodeChanges } from '#test/fixtures/gateway-waits.ts';

const NODES = ['vllm-1', 'vllm-2', 'vllm-3'];
const FLEET = NODES.map(
  (name) => `[[node]]\nname = "${name}"\nkind = "vllm"\nmodels = ["qwen3-8B"]\nttft = "2ms"\ntokens_per_second = 1000\n`,
).join('\n');

let rig: FleetAndGateway;

before(async () => {
  rig = await startFleetAndGateway(FLEET, (sim) =>
    gatewayConfig({
      health: { interval: '100ms', timeout: '5s', failThreshold: 2 },
      discovery: { interval: '100ms', timeout: '5s' },
      nodes: sim.nodes.map((n) => ({ name: n.name, url: n.url, kind: 'vllm' })),
    }),
  );
  for (const name of NODES) await waitForNode(rig.gw, name, modelState('known'), 'listed');
});

after(async () => {
  await rig?.close();
});

/** Who serves qwen3-8B, as every view tells it. */
async function servedBy(): Promise<Record<string, unknown>> {
  const v1 = (await httpJson('GET', `${rig.gw.url}/v1/models`)).json<{ data: { id: string; nodes: string[] }[] }>();
  const admin = (await httpJson('GET', `${rig.gw.url}/admin/models`)).json<{
    models: { model: string; loaded_on: string[]; on_demand: string[]; unavailable_on?: string[] }[];
    nodes: { name: string; loaded: string[] }[];
  }>();
  const row = admin.models.find((m) => m.model === 'qwen3-8B');
  const stdout = new PassThrough();
  let cli = '';
  stdout.on('data', (c: Buffer) => (cli += c.toString()));
  const code = await runModels(['--url', rig.gw.url], {
    stdout,
    stderr: new PassThrough(),
    env: {},
    signal: AbortSignal.timeout(30_000),
    hangups: new HangupRelay(0),
  });
  assert.equal(code, 0);
  return {
    v1: v1.data.find((m) => m.id === 'qwen3-8B')?.nodes,
    admin: row?.loaded_on,
    adminOnDemand: row?.on_demand,
    adminUnavailable: row?.unavailable_on ?? [],
    cli: /^qwen3-8B\s+(\S+)/m.exec(cli)?.[1],
    dashboard: (await dashboardModels()).find((m) => m.id === 'qwen3-8B')?.nodes,
  };
}

/** The dashboard's model table: the snapshot of GET /admin/events (what the Models view renders). */
async function dashboardModels(): Promise<{ id: string; nodes: string[] }[]> {
  const res = await fetch(`${rig.gw.url}/admin/events`, { signal: AbortSignal.timeout(30_000) });
  assert.equal(res.status, 200);
  assert.ok(res.body);
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let text = '';
  try {
    while (!text.includes('\n\n', text.indexOf('event: snapshot'))) text += (await reader.read()).value ?? '';
  } finally {
    await reader.cancel();
  }
  return (JSON.parse(/event: snapshot\ndata: (.*)\n/.exec(text)?.[1] ?? 'null') as { models: { id: string; nodes: string[] }[] })
    .models;
}

test('a dead node whose listing expired is serving nowhere: not in /v1/models, /admin/models, the CLI or the dashboard', async () => {
  assert.deepEqual(
    await servedBy(),
    {
      v1: NODES,
      admin: NODES,
      adminOnDemand: [],
      adminUnavailable: [],
      cli: NODES.join(','),
      dashboard: NODES,
    },
    'all three serve it at first',
  );
  await setSimFaults(rig.sim.url('vllm-3'), { health: 'fail', models: 'error500', inference: 'error500' });
  await waitForNode(rig.gw, 'vllm-3', (d) => d.status === 'dead' && d.models.state === 'expired', 'dead, its listing expired');
  assert.deepEqual(await servedBy(), {
    v1: ['vllm-1', 'vllm-2'],
    admin: ['vllm-1', 'vllm-2'],
    adminOnDemand: [],
    adminUnavailable: ['vllm-3'],
    cli: 'vllm-1,vllm-2',
    dashboard: ['vllm-1', 'vllm-2'],
  });
  const admin = (await httpJson('GET', `${rig.gw.url}/admin/models`)).json<{
    nodes: { name: string; loaded: string[]; unavailable: string | null }[];
  }>();
  const dead = admin.nodes.find((n) => n.name === 'vllm-3');
  assert.deepEqual(dead?.loaded, [], 'a dead node runs nothing the gateway could use');
  assert.match(dead?.unavailable ?? '', /^dead/);
});

test('back up and listed again, it serves again everywhere', async () => {
  await setSimFaults(rig.sim.url('vllm-3'), { health: 'none', models: 'none', inference: 'none' });
  await waitForNode(rig.gw, 'vllm-3', (d) => d.status === 'healthy' && d.models.state === 'known', 'back');
  await untilEvent(
    async () => JSON.stringify((await servedBy()).dashboard) === JSON.stringify(NODES),
    [nodeChanges(rig.gw)],
    'the dashboard shows it serving again',
  );
  assert.deepEqual(await servedBy(), {
    v1: NODES,
    admin: NODES,
    adminOnDemand: [],
    adminUnavailable: [],
    cli: NODES.join(','),
    dashboard: NODES,
  });
});
