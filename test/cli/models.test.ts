// `switchyard models`, in process against a gateway in front of a simulated router: the table, a
// load and an unload, the token, and usage errors.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { runModels } from '#src/cli/models.ts';
import { HangupRelay } from '#src/cli/hangups.ts';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startFleetAndGateway, type FleetAndGateway } from '#test/fixtures/in-process-fleet.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { ONE_LOADED_ROUTER_FLEET } from '#test/fixtures/router-fleet.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { nodeChanges } from '#test/fixtures/gateway-waits.ts';

const TOKEN = 'cli-models-token';
const FLEET = ONE_LOADED_ROUTER_FLEET;

let rig: FleetAndGateway;

before(async () => {
  rig = await startFleetAndGateway(FLEET, (sim) =>
    gatewayToml(
      [{ name: 'router', url: sim.url('router'), kind: 'llamacpp' }],
      `[admin]\ntoken = "${TOKEN}"\n[[models.available]]\nname = "model-a"\npin = true\n`,
    ),
  );
  await untilEvent(
    async () => {
      const hosts = (await httpJson('GET', `${rig.gw.url}/admin/hosts`, undefined, { authorization: `Bearer ${TOKEN}` })).json<{
        hosts: { name: string; loaded: string[] }[];
      }>();
      return hosts.hosts.find((h) => h.name === 'router')?.loaded.includes('model-a') === true;
    },
    [nodeChanges(rig.gw)],
    'the router discovered',
  );
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
  const code = await runModels(args, {
    stdout,
    stderr,
    env: {},
    signal: AbortSignal.timeout(60_000),
    hangups: new HangupRelay(0),
  });
  return { code, stdout: out, stderr: err };
}

test('models lists each model with where it is loaded and its desired state', async () => {
  const shown = await cli(['--url', rig.gw.url, '--token', TOKEN]);
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, /^MODEL\s+LOADED ON\s+ON DEMAND\s+DESIRED/);
  assert.match(shown.stdout, /model-a\s+router\s+-\s+pin/);
  assert.match(shown.stdout, /model-b\s+-\s+router/);
});

test('models load and unload act, and say what was done or why not', async () => {
  const loaded = await cli(['load', 'model-b', '--url', rig.gw.url, '--token', TOKEN]);
  assert.equal(loaded.code, 0, loaded.stderr);
  assert.match(loaded.stdout, /^done: load model-b on router/);
  const pinned = await cli(['unload', 'model-a', '--node', 'router', '--url', rig.gw.url, '--token', TOKEN]);
  assert.equal(pinned.code, 1);
  assert.match(pinned.stderr, /refused: unload model-a on router — model 'model-a' is pinned/);
  const unloaded = await cli(['unload', 'model-b', '--node', 'router', '--url', rig.gw.url, '--token', TOKEN]);
  assert.equal(unloaded.code, 0, unloaded.stderr);
});

test('without the token the gateway refuses (exit 3); usage errors exit 2', async () => {
  const refused = await cli(['load', 'model-b', '--url', rig.gw.url]);
  assert.equal(refused.code, 3);
  assert.match(refused.stderr, /HTTP 401/);
  assert.equal((await cli(['unload', 'model-b', '--url', rig.gw.url])).code, 2);
  assert.equal((await cli(['frobnicate', 'x', '--url', rig.gw.url])).code, 2);
  assert.equal((await cli(['load', '--url', rig.gw.url])).code, 2);
});
