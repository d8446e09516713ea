// `switchyard models load` against a router whose slots hold a pinned and a warm model (issue 38,
// item 13): the 409 reason is shown with the command's own override, `--evict-warm` loads and the
// answer says until when the load is held, and the table shows the hold.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { runModels } from '#src/cli/models.ts';
import { HangupRelay } from '#src/cli/hangups.ts';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startFleetAndGateway, type FleetAndGateway } from '#test/fixtures/in-process-fleet.ts';
import { eventually, httpJson } from '#test/fixtures/http.ts';

const FLEET = `
[[node]]
name = "router"
kind = "llamacpp-router"
models_max = 2
load_time = "30ms"

[[node.model]]
id = "keep"
status = "loaded"

[[node.model]]
id = "hot"
status = "loaded"

[[node.model]]
id = "extra"
status = "unloaded"
`;

let rig: FleetAndGateway;

before(async () => {
  rig = await startFleetAndGateway(FLEET, (sim) =>
    gatewayToml([{ name: 'router', url: sim.url('router'), kind: 'llamacpp' }], '[models]\noperator_hold = "15m"\n\n[[models.available]]\nname = "keep"\npin = true\n\n[[models.available]]\nname = "hot"\nwarm = 1\n'),
  );
  await eventually(async () => {
    const hosts = (await httpJson('GET', `${rig.gw.url}/admin/hosts`)).json<{ hosts: { name: string; loaded: string[]; router?: { max_instances?: number } }[] }>();
    const router = hosts.hosts.find((h) => h.name === 'router');
    return router?.router?.max_instances === 2 && router.loaded.length === 2;
  }, 30_000, 'the router discovered, full');
});

after(async () => {
  await rig?.close();
});

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  const code = await runModels(args, { stdout, stderr, env: {}, signal: AbortSignal.timeout(60_000), hangups: new HangupRelay(0) });
  return { code, stdout: out, stderr: err };
}

test('models load shows why the gateway refuses and the switch that overrides it', async () => {
  const refused = await cli(['load', 'extra', '--node', 'router', '--url', rig.gw.url]);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /^refused: load extra on router — loading 'extra' on node 'router', unloading warm 'hot' would not stand/);
  assert.match(refused.stderr, /pinned 'keep'/);
  assert.match(refused.stderr, /switchyard models load extra --node router --evict-warm does it anyway/);
});

test('models load --evict-warm loads, says until when it holds, and the table shows the hold', async () => {
  const loaded = await cli(['load', '--evict-warm', 'extra', '--node', 'router', '--url', rig.gw.url]);
  assert.equal(loaded.code, 0, loaded.stderr);
  assert.match(loaded.stdout, /^done: load extra on router \(unloaded hot first\) — .*held there by the operator until \d{4}-\d\d-\d\dT/);
  const shown = await cli(['--url', rig.gw.url]);
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, /HELD BY OPERATOR/);
  assert.match(shown.stdout, /extra\s+router\s.*router until \d{4}-\d\d-\d\dT/);
});

test('--evict-warm is for a load or an unload, and takes no value', async () => {
  assert.equal((await cli(['--evict-warm', '--url', rig.gw.url])).code, 2);
  assert.equal((await cli(['load', 'extra', '--evict-warm=yes', '--url', rig.gw.url])).code, 2);
});
