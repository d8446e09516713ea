// Issue 38, item 9, the hostile scenario in real Chromium: without [admin] token, a page served by
// another loopback server (another port: same-site, cross-origin) unloaded a model, loaded another
// and posted a reload on the gateway; a page under a rebound DNS name could read /admin/requests and
// /admin/tenants. What must hold: the attacker page's no-cors fetches (text/plain body, no body) and
// its text/plain form post reach the gateway and get 403, its JSON fetch is stopped at the preflight,
// and the router is left as it was; a page under a name that resolves to the gateway (the rebinding
// end state, made with Chromium's --host-resolver-rules) gets 421 for every admin read and change;
// the gateway's own dashboard still reloads, loads and unloads. Skipped without Chromium, as the other
// browser tests.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromiumPath, launchChromium, PAGE_TIMEOUT_MS, type Browser, skipWithoutChromium } from '#test/fixtures/browser.ts';
import { eventually } from '#test/fixtures/http.ts';
import { ONE_LOADED_ROUTER, startRouterRig, type RouterRig } from '#test/fixtures/router-fleet.ts';

const CHROMIUM = chromiumPath();
const SKIP = skipWithoutChromium();
/** A name only this Chromium resolves, to 127.0.0.1: where a DNS-rebinding page ends up. */
const REBOUND = 'rebind.attacker.test';

/** The attacker's page: a text/plain form aimed at /admin/models/load, and fetches run by attack(). */
function attackerPage(gw: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>cute cats</title></head><body>
<iframe name="sink" id="sink"></iframe>
<form id="form" method="POST" enctype="text/plain" target="sink" action="${gw}/admin/models/load"><input type="hidden" name='{"model":"model-b","node":"router","x":"' value='"}'></form>
<script>
window.attack = async () => {
  const body = JSON.stringify({ model: 'model-a', node: 'router' });
  const tries = [
    ['unload, no-cors text/plain', '/admin/models/unload', { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body }],
    ['reload, no-cors without a body', '/admin/reload', { method: 'POST', mode: 'no-cors' }],
    ['unload, cors JSON', '/admin/models/unload', { method: 'POST', headers: { 'content-type': 'application/json' }, body }],
    ['read /admin/requests', '/admin/requests', {}],
  ];
  const results = {};
  for (const [name, path, init] of tries) {
    try {
      const res = await fetch(${JSON.stringify(gw)} + path, init);
      results[name] = res.type + ' ' + res.status;
    } catch (error) {
      results[name] = 'failed';
    }
  }
  return results;
};
</script></body></html>`;
}

let rig: RouterRig;
let attacker: Server;
let attackerUrl: string;
let browser: Browser | undefined;

before(async () => {
  if (CHROMIUM === undefined) return;
  rig = await startRouterRig({ routers: [ONE_LOADED_ROUTER], options: { logLevel: 'warn' } });
  const page = attackerPage(rig.gw.url);
  attacker = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(page) });
    res.end(page);
  });
  await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
  attackerUrl = `http://127.0.0.1:${(attacker.address() as AddressInfo).port}`;
  browser = await launchChromium(CHROMIUM, [`--host-resolver-rules=MAP ${REBOUND} 127.0.0.1`]);
});

after(async () => {
  await browser?.close();
  if (attacker !== undefined) await new Promise<void>((resolve) => attacker.close(() => resolve()));
  await rig?.close();
});

test(
  'a page of another origin cannot unload, load or reload: each attempt is refused at the gateway',
  { skip: SKIP },
  async () => {
    assert.ok(browser);
    const page = await browser.context.newPage();
    const seen: string[] = [];
    page.on('response', (response) => {
      const url = new URL(response.url());
      if (url.origin === rig.gw.url) seen.push(`${response.request().method()} ${url.pathname} ${response.status()}`);
    });
    try {
      await page.goto(`${attackerUrl}/cats.html`);
      const results = await page.evaluate<Record<string, string>>('window.attack()');
      // Sent, answered, unreadable to the page (opaque) — and refused, as the gateway's answers show.
      assert.equal(results['unload, no-cors text/plain'], 'opaque 0');
      assert.equal(results['reload, no-cors without a body'], 'opaque 0');
      // A JSON body needs a preflight, which the admin routes never grant: never sent.
      assert.equal(results['unload, cors JSON'], 'failed');
      // Reads are not CORS-readable from another origin.
      assert.equal(results['read /admin/requests'], 'failed');
      await eventually(
        () => seen.includes('POST /admin/models/unload 403') && seen.includes('POST /admin/reload 403'),
        PAGE_TIMEOUT_MS,
        `the refusals (seen: ${seen.join('; ')})`,
      );

      // The classic form post (text/plain, a JSON-looking body) into a hidden frame.
      await page.evaluate(`document.getElementById('form').submit()`);
      const sink = page.frame({ name: 'sink' });
      assert.ok(sink);
      // (The frame's content cannot be read while it navigates: read again until the answer is there.)
      const sinkText = (): Promise<string> => sink.content().catch(() => '');
      await eventually(async () => /"code":"cross_site"/.test(await sinkText()), PAGE_TIMEOUT_MS, 'the form post answered');
      assert.match(await sinkText(), /Sec-Fetch-Site is 'same-site'/);
      assert.ok(seen.includes('POST /admin/models/load 403'), seen.join('; '));
      assert.ok(!seen.some((line) => / 200$/.test(line) && line.startsWith('POST')), `no change succeeded: ${seen.join('; ')}`);

      assert.equal(await rig.routerStatus('model-a'), 'loaded', 'the cross-origin unload did not happen');
      assert.equal(await rig.routerStatus('model-b'), 'unloaded', 'the cross-origin load did not happen');
    } finally {
      await page.close();
    }
  },
);

test('a page under a rebound name reads and changes nothing: 421 for every admin route', { skip: SKIP }, async () => {
  assert.ok(browser);
  const port = new URL(rig.gw.url).port;
  const page = await browser.context.newPage();
  try {
    // The rebinding's end state: the attacker's name now resolves to the gateway, so its page is same-origin with it.
    const landing = await page.goto(`http://${REBOUND}:${port}/admin/`);
    assert.equal(landing?.status(), 421);
    const answers = await page.evaluate<Record<string, number>>(`(async () => {
      const out = {};
      for (const path of ['/admin/requests', '/admin/tenants', '/admin/hosts', '/admin/events', '/metrics']) out[path] = (await fetch(path)).status;
      out['unload'] = (await fetch('/admin/models/unload', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'model-a', node: 'router' }) })).status;
      out['health details'] = Object.keys(await (await fetch('/health')).json()).join(',');
      return out;
    })()`);
    assert.deepEqual(answers, {
      '/admin/requests': 421,
      '/admin/tenants': 421,
      '/admin/hosts': 421,
      '/admin/events': 421,
      '/metrics': 421,
      unload: 421,
      'health details': 'status',
    });
    assert.equal(await rig.routerStatus('model-a'), 'loaded');
  } finally {
    await page.close();
  }
});

test("the gateway's own dashboard still reloads, loads and unloads", { skip: SKIP }, async () => {
  assert.ok(browser);
  const page = await browser.context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(error.message));
  try {
    await page.goto(`${rig.gw.url}/admin/`);
    await page.locator('#feed-status[data-state="live"]').waitFor();
    // Each answer shows beside its button (issue 43); an unload asks first.
    await page.locator('#reload-button').click();
    const reloaded = page.locator('#reload-button-outcome');
    await eventually(
      async () => /config reloaded/.test(await reloaded.innerText().catch(() => '')),
      PAGE_TIMEOUT_MS,
      'the reload answer',
    );
    const cell = page.locator('#models td.model-actions[data-model="model-b"]');
    const result = cell.locator('.action-outcome');
    const load = cell.locator('button[data-action="load"]');
    await load.waitFor();
    await eventually(async () => !(await load.isDisabled()), PAGE_TIMEOUT_MS, 'the load button enabled');
    await load.click();
    await eventually(
      async () => /^✔ (done|already): load model-b on router/.test(await result.innerText().catch(() => '')),
      PAGE_TIMEOUT_MS,
      'the load answer',
    );
    assert.equal(await rig.routerStatus('model-b'), 'loaded');
    const unload = cell.locator('button.action[data-action="unload"]');
    await unload.waitFor();
    await eventually(async () => !(await unload.isDisabled()), PAGE_TIMEOUT_MS, 'the unload button enabled');
    await unload.click();
    await cell.locator('.action-confirm button[data-confirm="yes"]').click();
    await eventually(
      async () => /^✔ (done|already): unload model-b on router/.test(await result.innerText()),
      PAGE_TIMEOUT_MS,
      'the unload answer',
    );
    assert.equal(await rig.routerStatus('model-b'), 'unloaded');
    assert.deepEqual(problems, []);
  } finally {
    await page.close();
  }
});
