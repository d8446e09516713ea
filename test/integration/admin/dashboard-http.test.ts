// The dashboard over plain HTTP (the browser test covers the page itself): the routes, the files
// from the package's own dependencies, the admin guard on the feed, and a stop that ends the feed.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEMO_FLEET, demoGatewayToml } from '#src/cli/demo.ts';
import { startFleetAndGateway, startGateway, startSimFleet } from '#test/fixtures/in-process-fleet.ts';

const TOKEN = 'dashboard-http-test-token';

test('/admin redirects to the page; the page and its files are served with their types and a strict CSP', async () => {
  const { gw, close } = await startFleetAndGateway(DEMO_FLEET, (sim) => demoGatewayToml(sim.nodes, 0), { logLevel: 'warn' });
  try {
    const redirect = await fetch(`${gw.url}/admin`, { redirect: 'manual' });
    assert.equal(redirect.status, 308);
    assert.equal(new URL(redirect.headers.get('location') ?? '', `${gw.url}/admin`).pathname, '/admin/');
    const page = await fetch(`${gw.url}/admin/`);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    const csp = page.headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self' 'sha256-[A-Za-z0-9+/=]+'/);
    const html = await page.text();
    assert.match(html, /<script type="importmap">\{"imports":\{"preact":"\.\/ui\/vendor\/preact\.mjs"/);
    for (const [file, type] of [
      ['app.js', /^text\/javascript/],
      ['style.css', /^text\/css/],
      ['vendor/preact.mjs', /^text\/javascript/],
      ['vendor/preact-hooks.mjs', /^text\/javascript/],
      ['vendor/htm.mjs', /^text\/javascript/],
      ['vendor/uplot.mjs', /^text\/javascript/],
      ['vendor/uplot.css', /^text\/css/],
    ] as const) {
      const res = await fetch(`${gw.url}/admin/ui/${file}`);
      assert.equal(res.status, 200, file);
      assert.match(res.headers.get('content-type') ?? '', type, file);
      assert.ok((await res.arrayBuffer()).byteLength > 100, file);
    }
    assert.equal((await fetch(`${gw.url}/admin/ui/../../etc/passwd`)).status, 404);
  } finally {
    await close();
  }
});

test('/admin/events needs the admin token when one is set, streams a snapshot, and a stop ends it', async () => {
  const sim = await startSimFleet(DEMO_FLEET);
  const gw = await startGateway(`${demoGatewayToml(sim.nodes, 0)}[admin]\ntoken = "${TOKEN}"\n`, { logLevel: 'warn' });
  try {
    assert.equal((await fetch(`${gw.url}/admin/events`)).status, 401);
    assert.equal((await fetch(`${gw.url}/admin/events`, { headers: { authorization: 'Bearer wrong' } })).status, 401);
    const head = await fetch(`${gw.url}/admin/events`, { method: 'HEAD', headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(head.status, 200);
    assert.equal(gw.gateway.liveFeed.clientCount(), 0, 'a HEAD opens no stream');
    const res = await fetch(`${gw.url}/admin/events`, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
    assert.ok(res.body);
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    while (!text.includes('\n\n', text.indexOf('event: snapshot'))) text += (await reader.read()).value ?? '';
    const data = JSON.parse(/event: snapshot\ndata: (.*)\n/.exec(text)?.[1] ?? 'null') as { nodes: { name: string }[] };
    assert.deepEqual(
      data.nodes.map((n) => n.name),
      sim.nodes.map((n) => n.name),
    );
    assert.equal(gw.gateway.liveFeed.clientCount(), 1);
    // A stop must not wait out the drain for a stream that never ends by itself.
    const started = Date.now();
    await gw.close();
    // drain_timeout is 30 s: a stop far shorter than it did not wait the drain out (generous for a busy machine).
    assert.ok(Date.now() - started < 20_000, `the stop took ${Date.now() - started} ms`);
    for (;;) if ((await reader.read()).done) break;
  } finally {
    await gw.close();
    await sim.close();
  }
});
