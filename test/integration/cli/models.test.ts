// `switchyard models`, in process against a gateway in front of a simulated router: the table, a
// load and an unload, the token, and usage errors.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { runModelsCli, type CliRun } from '#test/fixtures/models-cli.ts';
import { ONE_LOADED_ROUTER, startRouterRig, type RouterRig } from '#test/fixtures/router-fleet.ts';

const TOKEN = 'cli-models-token';

let rig: RouterRig;

before(async () => {
  rig = await startRouterRig({
    routers: [ONE_LOADED_ROUTER],
    token: TOKEN,
    gateway: '[[models.available]]\nname = "model-a"\npin = true\n',
  });
});

after(async () => {
  await rig?.close();
});

const cli = (args: string[]): Promise<CliRun> => runModelsCli(args);

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
