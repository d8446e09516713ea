// The dashboard's cluster line in real Chromium ([cluster], issue 26: a replica that lost the
// store "shows it in the dashboard"), against GET /admin/runtime answered by the test (playwright's
// route): a replica sharing the store, then one in fallback (since when, why), then a failure, and
// a gateway without [cluster] (the line takes no room).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Route } from 'playwright-core';
import { chromiumPath, launchChromium, type Browser, skipWithoutChromium } from '#test/fixtures/browser.ts';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startInProcessGateway, type InProcessGateway } from '#test/fixtures/in-process.ts';

const CHROMIUM = chromiumPath();
const SKIP = skipWithoutChromium();

let browser: Browser | undefined;
let gw: InProcessGateway | undefined;

before(async () => {
  if (CHROMIUM === undefined) return;
  gw = await startInProcessGateway(gatewayToml([{ name: 'gpu-1', url: 'http://127.0.0.1:9/', kind: 'vllm' }]), {
    logLevel: 'warn',
  });
  browser = await launchChromium(CHROMIUM);
});

after(async () => {
  await browser?.close();
  await gw?.close();
});

const SHARED = {
  replica: 'gw-1',
  store: 'shared',
  live_replicas: 3,
  leases_held: 2,
  waiters: 1,
  store_losses: 0,
  mesh_leader: true,
};
const FALLBACK = {
  replica: 'gw-1',
  store: 'fallback',
  live_replicas: 3,
  leases_held: 1,
  waiters: 0,
  store_losses: 1,
  fallback_since: '2026-12-02T15:00:00.000Z',
  fallback_reason: 'Command timed out',
};

test(
  'the cluster line shows the replica sharing the store, then in fallback with since and why, then a failure',
  { skip: SKIP },
  async () => {
    assert.ok(browser && gw);
    const page = await browser.context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    const current: { body: unknown; status: number } = { body: { cluster: SHARED }, status: 200 };
    await page.route('**/admin/runtime', (route: Route) =>
      route.fulfill({ status: current.status, contentType: 'application/json', body: JSON.stringify(current.body) }),
    );
    try {
      await page.goto(`${gw.url}/admin/`);
      await page.locator('#cluster[data-store="shared"]').waitFor();
      const line = (): Promise<string> => page.locator('#cluster-line').innerText();
      assert.match(
        await line(),
        /Replica gw-1 · shares the store · 3 live replicas · 2 leases held · 1 waiting · 0 store losses · publishes the site's mesh record/,
      );
      current.body = { cluster: FALLBACK };
      await page.locator('#cluster[data-store="fallback"]').waitFor();
      assert.match(
        await line(),
        /store lost since 2026-12-02T15:00:00.000Z \(Command timed out\): each node's slots and each tenant limit are this replica's share/,
      );
      assert.match(await line(), /1 store losses/);
      current.status = 500;
      current.body = { error: { message: 'boom' } };
      await page.locator('#cluster-error').waitFor();
      assert.match(await page.locator('#cluster-error').innerText(), /answered 500/);
      assert.equal(await page.locator('#fleet').isVisible(), true, 'the rest of the page stays');
      current.status = 200;
      current.body = { uptime_s: 1 };
      await page.locator('#cluster[data-state="none"]').waitFor({ state: 'attached' });
      assert.equal(await page.locator('#cluster').isVisible(), false, 'without [cluster] the line takes no room');
      assert.deepEqual(problems, []);
    } finally {
      await page.close();
    }
  },
);

test("against the gateway's own GET /admin/runtime without [cluster]: no cluster line", { skip: SKIP }, async () => {
  assert.ok(browser && gw);
  const page = await browser.context.newPage();
  try {
    await page.goto(`${gw.url}/admin/`);
    await page.locator('#cluster[data-state="none"]').waitFor({ state: 'attached' });
    assert.equal(await page.locator('#cluster').isVisible(), false);
  } finally {
    await page.close();
  }
});
