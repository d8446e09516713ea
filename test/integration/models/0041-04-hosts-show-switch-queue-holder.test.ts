// Issue 41, item 3: /admin/hosts says, per llama-server router, who holds the requests that wait for
// its model switches — the router's own queue (build 10313 and later, one tenant, router_queue "auto")
// or the gateway's — with the scheduler's reason (scheduler/queue-holder.ts), read from the running
// gateway over the sim router.
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRouterRig, type RouterModel, type RouterRig } from '#test/fixtures/router-fleet.ts';
import { eventually, httpJson } from '#test/fixtures/http.ts';

interface Host {
  readonly name: string;
  readonly server?: { readonly version: string | null } | null;
  readonly switch_queue?: { readonly holder: string; readonly reason: string };
}

const TWO_MODELS: readonly RouterModel[] = [
  ['model-a', 'loaded'],
  ['model-b', 'unloaded'],
];

let rig: RouterRig | undefined;

afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

/** The router's hosts row once the gateway has read the build it states (the decision reads it). */
async function routerRow(on: RouterRig): Promise<Host> {
  let row: Host | undefined;
  await eventually(
    async () => {
      const hosts = (await httpJson('GET', `${on.gw.url}/admin/hosts`, undefined, on.adminHeaders)).json<{ hosts: Host[] }>();
      row = hosts.hosts.find((h) => h.name === 'router');
      return typeof row?.server?.version === 'string';
    },
    60_000,
    "the router's build learned",
  );
  assert.ok(row !== undefined);
  return row;
}

async function start(more: readonly string[], gateway: string): Promise<RouterRig> {
  return startRouterRig({ routers: [{ modelsMax: 1, more, models: TWO_MODELS }], gateway });
}

test('a router of a new build with one tenant holds its own switch queue, and /admin/hosts says so with the reason', async () => {
  rig = await start([], '[[tenants]]\nname = "solo"\nkeys = ["sk-solo-0123456789"]\n');
  const row = await routerRow(rig);
  assert.equal(row.switch_queue?.holder, 'router', JSON.stringify(row.switch_queue));
  assert.match(row.switch_queue?.reason ?? '', /queues per model itself .*the gateway does not hold its switches/);
});

test('router_queue = "gateway": /admin/hosts names the gateway, with the config key as the reason', async () => {
  rig = await start([], '[routing]\nrouter_queue = "gateway"\n');
  const row = await routerRow(rig);
  assert.deepEqual(row.switch_queue, { holder: 'gateway', reason: 'routing.router_queue = "gateway"' });
});

test('an old build (b10200): /admin/hosts names the gateway, because the build predates the router queue', async () => {
  rig = await start(['version = "b10200-0123abcd"'], '');
  const row = await routerRow(rig);
  assert.equal(row.server?.version, 'b10200-0123abcd');
  assert.deepEqual(row.switch_queue, { holder: 'gateway', reason: "its build b10200 predates the router's own queue (b10313)" });
});
