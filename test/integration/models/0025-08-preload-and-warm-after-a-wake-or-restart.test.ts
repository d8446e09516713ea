// Issue 25, item 8 (preload and warm after a wake or restart): the reconciler remembers what it
// preloaded on a node (an admin unload of a preloaded model is not undone) and forgets it when the
// node sleeps or dies. But an asleep node keeps its last listing, so on the wake the stale listing
// still showed the preloaded model running and the reconciler counted it as preloaded again: the
// woken node never got its preload back. Now only a listing taken after the node came up counts;
// a woken or restarted node gets its preloads and its warm models back within a round or two.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startGateway, startSimFleet, type GatewayUnderTest, type SimFleet } from '#test/fixtures/in-process-fleet.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { unusedPort as freePort } from '#test/fixtures/context.ts';
import { routerStatus, simRouter } from '#test/fixtures/router-fleet.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { nodeChanges } from '#test/fixtures/gateway-waits.ts';

const routerToml = (name: string, port: number, models: readonly string[]): string =>
  simRouter({
    name,
    modelsMax: 3,
    loadTime: '20ms',
    more: [`port = ${port}`],
    models: models.map((m) => [m, 'unloaded'] as const),
  });

let sleepyPort: number;
let plainPort: number;
let sleepy: SimFleet | undefined;
let plain: SimFleet | undefined;
let gw: GatewayUnderTest;

const SLEEPY = ['pre', 'warmed', 'other'];
const PLAIN = ['pre2', 'spare'];

before(async () => {
  sleepyPort = await freePort();
  plainPort = await freePort();
  sleepy = await startSimFleet(routerToml('sleepy', sleepyPort, SLEEPY));
  plain = await startSimFleet(routerToml('plain', plainPort, PLAIN));
  const nodes = `
[[nodes]]
name = "sleepy"
url = "http://127.0.0.1:${sleepyPort}"
kind = "llamacpp"
wake = { command = ["true"] }
wake_timeout = "30s"
[[nodes]]
name = "plain"
url = "http://127.0.0.1:${plainPort}"
kind = "llamacpp"
[[models.available]]
name = "pre"
preload = true
[[models.available]]
name = "warmed"
warm = 1
[[models.available]]
name = "pre2"
preload = true
`;
  gw = await startGateway(gatewayToml([], nodes));
});

after(async () => {
  await gw?.close();
  await sleepy?.close();
  await plain?.close();
});

async function status(port: number, model: string): Promise<string | undefined> {
  try {
    return await routerStatus(`http://127.0.0.1:${port}`, model);
  } catch {
    return undefined;
  }
}

const healthOf = async (node: string): Promise<string> =>
  (await httpJson('GET', `${gw.url}/health`))
    .json<{ details: { name: string; status: string }[] }>()
    .details.find((d) => d.name === node)?.status ?? '';

test('preload and warm come up after start; an admin unload of a preloaded model is not undone', async () => {
  await untilEvent(
    async () => (await status(sleepyPort, 'pre')) === 'loaded' && (await status(sleepyPort, 'warmed')) === 'loaded',
    [nodeChanges(gw)],
    'pre and warmed up on sleepy',
  );
  await untilEvent(async () => (await status(plainPort, 'pre2')) === 'loaded', [nodeChanges(gw)], 'pre2 up on plain');
  // The preload's own operation may still hold the node's ticket for a moment (`busy`).
  let unloaded = await httpJson('POST', `${gw.url}/admin/models/unload`, { model: 'pre2', node: 'plain' });
  await untilEvent(
    async () => {
      if (unloaded.status === 409 && unloaded.json<{ code: string }>().code === 'busy')
        unloaded = await httpJson('POST', `${gw.url}/admin/models/unload`, { model: 'pre2', node: 'plain' });
      return unloaded.status !== 409;
    },
    [nodeChanges(gw)],
    'the unload taken',
  );
  assert.equal(unloaded.status, 200, unloaded.text);
  // The reconciler's next round would do nothing for it: it preloaded it once since the node came up.
  const view = (await httpJson('GET', `${gw.url}/admin/models`)).json<{ models: { model: string; next: unknown[] }[] }>();
  assert.deepEqual(view.models.find((m) => m.model === 'pre2')?.next, []);
  assert.equal(await status(plainPort, 'pre2'), 'unloaded');
});

test('a node that slept and woke gets its preload and its warm model back', async () => {
  await sleepy?.close();
  sleepy = undefined;
  await untilEvent(async () => (await healthOf('sleepy')) === 'asleep', [nodeChanges(gw)], 'sleepy asleep');
  // The machine comes back (its router restarted: every model unloaded).
  sleepy = await startSimFleet(routerToml('sleepy', sleepyPort, SLEEPY));
  assert.equal(await status(sleepyPort, 'pre'), 'unloaded');
  const woken = await httpJson('POST', `${gw.url}/admin/wake?node=sleepy`);
  assert.ok(woken.status < 300, woken.text);
  await untilEvent(
    async () => (await status(sleepyPort, 'pre')) === 'loaded' && (await status(sleepyPort, 'warmed')) === 'loaded',
    [nodeChanges(gw)],
    'pre and warmed back after the wake',
  );
  assert.equal(await status(sleepyPort, 'other'), 'unloaded', 'nothing else is loaded');
});

test('a node that died and restarted gets its preload back (the admin unload before it no longer counts)', async () => {
  await plain?.close();
  plain = undefined;
  await untilEvent(async () => (await healthOf('plain')) === 'dead', [nodeChanges(gw)], 'plain dead');
  plain = await startSimFleet(routerToml('plain', plainPort, PLAIN));
  await untilEvent(async () => (await status(plainPort, 'pre2')) === 'loaded', [nodeChanges(gw)], 'pre2 back after the restart');
  assert.equal(await status(plainPort, 'spare'), 'unloaded');
});
