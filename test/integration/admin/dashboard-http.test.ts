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

test('/admin/events?topics=: the tenants and requests only for a caller with the token; unknown topics and bad filters named', async () => {
  const sim = await startSimFleet(DEMO_FLEET);
  const tenants = `[[tenants]]\nname = "team-a"\nkeys = ["sk-dashboard-http-team-a-0123456789"]\n`;
  const gw = await startGateway(`${demoGatewayToml(sim.nodes, 0)}[admin]\ntoken = "${TOKEN}"\n\n${tenants}`, {
    logLevel: 'warn',
  });
  const auth = { authorization: `Bearer ${TOKEN}` };
  try {
    // The Tenants view's topic passes the same admin guard as GET /admin/tenants.
    for (const topics of ['tenants', 'requests', 'tenants,requests,nodes']) {
      const refused = await fetch(`${gw.url}/admin/events?topics=${topics}`);
      assert.equal(refused.status, 401, topics);
      assert.doesNotMatch(await refused.text(), /team-a/);
    }
    const unknown = await fetch(`${gw.url}/admin/events?topics=nodes,polling`, { headers: auth });
    assert.equal(unknown.status, 400);
    const named = (await unknown.json()) as { error: { message: string; param: string } };
    assert.equal(named.error.param, 'topics');
    assert.match(named.error.message, /unknown feed topic 'polling'/);
    const badFilter = await fetch(`${gw.url}/admin/events?topics=requests&status=teapot`, { headers: auth });
    assert.equal(badFilter.status, 400);
    assert.equal(((await badFilter.json()) as { error: { param: string } }).error.param, 'status');
    assert.equal(gw.gateway.liveFeed.clientCount(), 0, 'no stream for a refused feed');

    const res = await fetch(`${gw.url}/admin/events?topics=tenants,cluster`, { headers: auth });
    assert.equal(res.status, 200);
    assert.ok(res.body);
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    while (!/event: tenants\ndata: .*\n\n/.test(text)) text += (await reader.read()).value ?? '';
    const snapshot = JSON.parse(/event: snapshot\ndata: (.*)\n/.exec(text)?.[1] ?? 'null') as Record<string, unknown>;
    assert.equal(snapshot.nodes, undefined, 'no fleet rows for a page without the Fleet view');
    assert.equal(snapshot.cluster, null, 'no [cluster]: no line');
    const report = JSON.parse(/event: tenants\ndata: (.*)\n/.exec(text)?.[1] ?? 'null') as { full: boolean; order: string[] };
    assert.equal(report.full, true);
    assert.deepEqual(report.order, ['team-a']);
    await reader.cancel();
  } finally {
    await gw.close();
    await sim.close();
  }
});
