// `switchyard models load` against a router whose slots hold a pinned and a warm model (issue 38,
// item 13): the 409 reason is shown with the command's own override, `--evict-warm` loads and the
// answer says until when the load is held, and the table shows the hold.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { runModelsCli, type CliRun } from '#test/fixtures/models-cli.ts';
import type { FleetAndGateway } from '#test/fixtures/in-process-fleet.ts';
import { startPinnedWarmRouter } from '#test/fixtures/pinned-warm-router.ts';

let rig: FleetAndGateway;

before(async () => {
  rig = await startPinnedWarmRouter({ models: '[models]\noperator_hold = "15m"\n\n' });
});

after(async () => {
  await rig?.close();
});

const cli = (args: string[]): Promise<CliRun> => runModelsCli(args);

test('models load shows why the gateway refuses and the switch that overrides it', async () => {
  const refused = await cli(['load', 'extra', '--node', 'router', '--url', rig.gw.url]);
  assert.equal(refused.code, 1);
  assert.match(
    refused.stderr,
    /^refused: load extra on router — loading 'extra' on node 'router', unloading warm 'hot' would not stand/,
  );
  assert.match(refused.stderr, /pinned 'keep'/);
  assert.match(refused.stderr, /switchyard models load extra --node router --evict-warm does it anyway/);
});

test('models load --evict-warm loads, says until when it holds, and the table shows the hold', async () => {
  const loaded = await cli(['load', '--evict-warm', 'extra', '--node', 'router', '--url', rig.gw.url]);
  assert.equal(loaded.code, 0, loaded.stderr);
  assert.match(
    loaded.stdout,
    /^done: load extra on router \(unloaded hot first\) — .*held there by the operator until \d{4}-\d\d-\d\dT/,
  );
  const shown = await cli(['--url', rig.gw.url]);
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, /HELD BY OPERATOR/);
  assert.match(shown.stdout, /extra\s+router\s.*router until \d{4}-\d\d-\d\dT/);
});

test('--evict-warm is for a load or an unload, and takes no value', async () => {
  assert.equal((await cli(['--evict-warm', '--url', rig.gw.url])).code, 2);
  assert.equal((await cli(['load', 'extra', '--evict-warm=yes', '--url', rig.gw.url])).code, 2);
});
