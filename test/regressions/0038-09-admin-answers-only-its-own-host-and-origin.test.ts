// Issue 38, item 9: without [admin] token, a page of another origin (real Chromium) unloaded a
// model, loaded another and posted a reload: nothing checked Origin, Sec-Fetch-Site, the content
// type or Host, so a DNS-rebinding page could also read /admin/requests and /admin/tenants.
// What must hold (src/admin/admin-access.ts, applied by the admin guard to every admin route):
// - a change (reload, wake, model load/unload) whose Origin is not the gateway's own, or whose
//   Sec-Fetch-Site is not same-origin/none, is refused 403 naming the check; one with a body that is
//   not JSON (a form post) 415 — and nothing changes;
// - every admin route (reads, the dashboard, /metrics) answers only an expected Host: IP literals,
//   localhost, the listen names and [admin] hosts; another name gets 421 naming [admin] hosts, and
//   /health gives it only {"status"};
// - the same through the request workers' relay ([server] workers = 2);
// - the gateway's own page (Origin and Host the same, JSON) and the CLI (no Origin, JSON) still act.
// The hostile page in real Chromium: 0038-09-cross-origin-page-in-chromium-changes-nothing.test.ts.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { startInProcessGateway, type InProcessGateway } from '#test/fixtures/in-process.ts';
import { ONE_LOADED_ROUTER, startRouterRig, type RouterRig } from '#test/fixtures/router-fleet.ts';

interface Answer {
  readonly status: number;
  readonly text: string;
  readonly code: string | undefined;
}

/** One request with exactly these headers (Host included: undici lets a test set it). */
async function send(method: string, url: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  const res = await request(url, { method: method as 'GET', headers, body, signal: AbortSignal.timeout(60_000) });
  const text = await res.body.text();
  let code: string | undefined;
  try {
    code = (JSON.parse(text) as { error?: { code?: string } }).error?.code;
  } catch {
    code = undefined;
  }
  return { status: res.statusCode, text, code };
}

let rig: RouterRig;
let host: string;

before(async () => {
  rig = await startRouterRig({ routers: [ONE_LOADED_ROUTER], options: { logLevel: 'warn' } });
  host = new URL(rig.gw.url).host;
});

after(async () => {
  await rig?.close();
});

describe('without [admin] token', () => {
  test('a change another origin sent is refused, naming the check, and changes nothing', async () => {
    const other = 'http://127.0.0.1:1';
    const json = { 'content-type': 'application/json' };
    const unload = JSON.stringify({ model: 'model-a', node: 'router' });
    const load = JSON.stringify({ model: 'model-b', node: 'router' });
    const cases: [string, string, Record<string, string>, string | undefined, number, string][] = [
      ['unload, Origin of another port', '/admin/models/unload', { ...json, origin: other }, unload, 403, 'cross_origin'],
      [
        'load, Origin of another site',
        '/admin/models/load',
        { ...json, origin: 'https://evil.example' },
        load,
        403,
        'cross_origin',
      ],
      ['unload, the null origin', '/admin/models/unload', { ...json, origin: 'null' }, unload, 403, 'cross_origin'],
      ['reload, Origin of another port', '/admin/reload', { origin: other }, undefined, 403, 'cross_origin'],
      ['wake, Origin of another port', '/admin/wake?node=router', { origin: other }, undefined, 403, 'cross_origin'],
      [
        'unload, Sec-Fetch-Site same-site',
        '/admin/models/unload',
        { ...json, 'sec-fetch-site': 'same-site' },
        unload,
        403,
        'cross_site',
      ],
      ['reload, Sec-Fetch-Site cross-site', '/admin/reload', { 'sec-fetch-site': 'cross-site' }, undefined, 403, 'cross_site'],
      ['unload, a text/plain form post', '/admin/models/unload', { 'content-type': 'text/plain' }, unload, 415, 'not_json'],
      [
        'load, a urlencoded form post',
        '/admin/models/load',
        { 'content-type': 'application/x-www-form-urlencoded' },
        'model=model-b&node=router',
        415,
        'not_json',
      ],
      ['reload, a text/plain form post', '/admin/reload', { 'content-type': 'text/plain' }, 'x', 415, 'not_json'],
    ];
    for (const [what, path, headers, body, status, code] of cases) {
      const answer = await send('POST', `${rig.gw.url}${path}`, headers, body);
      assert.equal(answer.status, status, `${what}: ${answer.text}`);
      assert.equal(answer.code, code, what);
    }
    assert.equal(await rig.routerStatus('model-a'), 'loaded', 'model-a was not unloaded');
    assert.equal(await rig.routerStatus('model-b'), 'unloaded', 'model-b was not loaded');
  });

  test('a foreign Host (DNS rebinding) reads nothing: 421 naming [admin] hosts; /health gives the status only', async () => {
    const rebound = `rebind.attacker.test:${new URL(rig.gw.url).port}`;
    for (const path of [
      '/admin/requests',
      '/admin/tenants',
      '/admin/hosts',
      '/admin/models',
      '/admin/runtime',
      '/admin/events',
      '/admin/access',
      '/admin/explain?model=model-a',
      '/metrics',
      '/admin/',
      '/admin',
    ]) {
      const answer = await send('GET', `${rig.gw.url}${path}`, { host: rebound });
      assert.equal(answer.status, 421, `${path}: ${answer.text}`);
      assert.equal(answer.code, 'unexpected_host', path);
      assert.match(answer.text, /\[admin\] hosts = \[\\"rebind\.attacker\.test\\"\]/, path);
    }
    const change = await send(
      'POST',
      `${rig.gw.url}/admin/models/unload`,
      { host: rebound, origin: `http://${rebound}`, 'content-type': 'application/json' },
      JSON.stringify({ model: 'model-a', node: 'router' }),
    );
    assert.equal(change.status, 421, change.text);
    const health = await send('GET', `${rig.gw.url}/health`, { host: rebound });
    assert.equal(health.status, 200);
    assert.deepEqual(Object.keys(JSON.parse(health.text) as object), ['status']);
    const own = await send('GET', `${rig.gw.url}/health`, { host });
    assert.ok('nodes' in (JSON.parse(own.text) as object), own.text);
    assert.equal(await rig.routerStatus('model-a'), 'loaded');
  });

  test('expected Hosts are answered: IP literals, localhost names', async () => {
    for (const name of [host, `localhost:${new URL(rig.gw.url).port}`, 'dash.localhost', '10.9.8.7:80']) {
      const answer = await send('GET', `${rig.gw.url}/admin/tenants`, { host: name });
      assert.equal(answer.status, 200, `${name}: ${answer.text}`);
    }
  });

  test("the gateway's own page (same Origin, JSON) and the CLI (no Origin, JSON) still act", async () => {
    const page = { origin: `http://${host}`, 'sec-fetch-site': 'same-origin', 'content-type': 'application/json' };
    const loaded = await send(
      'POST',
      `${rig.gw.url}/admin/models/load`,
      page,
      JSON.stringify({ model: 'model-b', node: 'router' }),
    );
    assert.equal(loaded.status, 200, loaded.text);
    assert.equal(await rig.routerStatus('model-b'), 'loaded');
    const cli = await send(
      'POST',
      `${rig.gw.url}/admin/models/unload`,
      { 'content-type': 'application/json' },
      JSON.stringify({ model: 'model-b', node: 'router' }),
    );
    assert.equal(cli.status, 200, cli.text);
    assert.equal(await rig.routerStatus('model-b'), 'unloaded');
    const reload = await send('POST', `${rig.gw.url}/admin/reload`, {
      origin: `http://${host}`,
      'sec-fetch-site': 'same-origin',
    });
    assert.equal(reload.status, 200, reload.text);
  });
});

describe('[admin] hosts, with a token, through the request workers', () => {
  let gw: InProcessGateway;
  const TOKEN = 'regression-0038-09-token';
  const toml = (hosts: string): string =>
    `[server]\nlisten = "127.0.0.1:0"\nworkers = 2\n[admin]\ntoken = "${TOKEN}"\n${hosts}\n[[nodes]]\nname = "far"\nurl = "http://127.0.0.1:9"\nkind = "vllm"\n`;
  before(async () => {
    gw = await startInProcessGateway(toml(''), { logLevel: 'warn' });
  });
  after(async () => {
    await gw?.close();
  });

  test('a name is answered once configured (a reload applies it), refused before; the token does not stand in for the Host', async () => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    // Several connections: with two workers the kernel spreads them, so the relay answers some.
    for (let i = 0; i < 4; i++) {
      const refused = await send('GET', `${gw.url}/admin/tenants`, { ...auth, host: 'gw.example.test', connection: 'close' });
      assert.equal(refused.status, 421, refused.text);
      const crossOrigin = await send('POST', `${gw.url}/admin/reload`, {
        ...auth,
        origin: 'http://127.0.0.1:1',
        connection: 'close',
      });
      assert.equal(crossOrigin.status, 403, crossOrigin.text);
      assert.equal(crossOrigin.code, 'cross_origin');
    }
    const outcome = await gw.reload(toml('hosts = ["gw.example.test"]'));
    assert.ok(outcome.ok, JSON.stringify(outcome));
    for (let i = 0; i < 4; i++) {
      const answered = await send('GET', `${gw.url}/admin/tenants`, {
        ...auth,
        host: 'GW.example.test:8080',
        connection: 'close',
      });
      assert.equal(answered.status, 200, answered.text);
      assert.equal((await send('GET', `${gw.url}/admin/tenants`, { host: 'gw.example.test', connection: 'close' })).status, 401);
    }
  });
});
