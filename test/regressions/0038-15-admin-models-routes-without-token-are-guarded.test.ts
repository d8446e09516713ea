// Issue 38, item 15 (first half): a mutation round found that the admin models routes
// (src/admin/models-routes.ts) could accept any caller and no test failed, because every test of
// them set [admin] token. Without a token the guard is all that stands between a caller and a
// model load or unload, so here, with NO token configured, the guard's decision must show on both
// routes: a proxied caller (forwarding headers), a page of another origin, a form post and a
// rebound Host are refused and the router is left as it was; a direct, local, same-origin caller
// loads and unloads. Made permissive (the routes unguarded, or guarded as reads), this fails.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startFleetAndGateway, type FleetAndGateway } from '#test/fixtures/in-process-fleet.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { ONE_LOADED_ROUTER_FLEET } from '#test/fixtures/router-fleet.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { nodeChanges } from '#test/fixtures/gateway-waits.ts';

const FLEET = ONE_LOADED_ROUTER_FLEET;

let rig: FleetAndGateway;

before(async () => {
  rig = await startFleetAndGateway(FLEET, (sim) => gatewayToml([{ name: 'router', url: sim.url('router'), kind: 'llamacpp' }]), {
    logLevel: 'warn',
  });
  await untilEvent(
    async () => {
      const hosts = (await httpJson('GET', `${rig.gw.url}/admin/hosts`)).json<{ hosts: { name: string; loaded: string[] }[] }>();
      return hosts.hosts.find((h) => h.name === 'router')?.loaded.includes('model-a') === true;
    },
    [nodeChanges(rig.gw)],
    'the router discovered',
  );
});

after(async () => {
  await rig?.close();
});

async function routerStatus(model: string): Promise<string | undefined> {
  const list = (await httpJson('GET', `${rig.sim.url('router')}/models`)).json<{
    data: { id: string; status: { value: string } }[];
  }>();
  return list.data.find((m) => m.id === model)?.status.value;
}

async function post(
  action: 'load' | 'unload',
  model: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; text: string }> {
  const res = await request(`${rig.gw.url}/admin/models/${action}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: body ?? JSON.stringify({ model, node: 'router' }),
    signal: AbortSignal.timeout(60_000),
  });
  return { status: res.statusCode, text: await res.body.text() };
}

test('no token: the models routes refuse what the guard refuses, and the router is left as it was', async () => {
  const port = new URL(rig.gw.url).port;
  const refused: [string, Record<string, string>, string | undefined, number, RegExp][] = [
    ['through a proxy (X-Forwarded-For)', { 'x-forwarded-for': '203.0.113.9' }, undefined, 403, /proxy.*\[admin\] token/],
    ['through a proxy (Forwarded)', { forwarded: 'for=203.0.113.9' }, undefined, 403, /proxy/],
    [
      'from a page of another origin',
      { origin: 'http://127.0.0.1:1' },
      undefined,
      403,
      /Origin 'http:\/\/127\.0\.0\.1:1' is not this gateway/,
    ],
    [
      'from a page of another site (Sec-Fetch-Site)',
      { 'sec-fetch-site': 'cross-site' },
      undefined,
      403,
      /Sec-Fetch-Site is 'cross-site'/,
    ],
    ['as a text/plain form post', { 'content-type': 'text/plain' }, undefined, 415, /Content-Type must be application\/json/],
    ['under a rebound Host', { host: `rebind.attacker.test:${port}` }, undefined, 421, /\[admin\] hosts/],
  ];
  for (const [what, headers, body, status, message] of refused) {
    for (const [action, model] of [
      ['unload', 'model-a'],
      ['load', 'model-b'],
    ] as const) {
      const answer = await post(action, model, headers, body);
      assert.equal(answer.status, status, `${action} ${what}: ${answer.text}`);
      assert.match(answer.text, message, `${action} ${what}`);
    }
  }
  assert.equal(await routerStatus('model-a'), 'loaded', 'no refused unload reached the router');
  assert.equal(await routerStatus('model-b'), 'unloaded', 'no refused load reached the router');
  const view = await request(`${rig.gw.url}/admin/models`, { headers: { host: `rebind.attacker.test:${port}` } });
  assert.equal(view.statusCode, 421, 'the models view is not read under a rebound Host');
  await view.body.text();
});

test('no token: a direct local caller from the gateway itself loads and unloads', async () => {
  const own = { origin: rig.gw.url, 'sec-fetch-site': 'same-origin' };
  const loaded = await post('load', 'model-b', own);
  assert.equal(loaded.status, 200, loaded.text);
  assert.equal(await routerStatus('model-b'), 'loaded');
  const unloaded = await post('unload', 'model-b', {});
  assert.equal(unloaded.status, 200, unloaded.text);
  assert.equal(await routerStatus('model-b'), 'unloaded');
});
