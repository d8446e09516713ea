// The dashboard's cluster line in real Chromium ([cluster], issue 26: a replica that lost the
// store "shows it in the dashboard"), against [cluster]'s figures the test stands in for (the feed's
// cluster source, which GET /admin/runtime carries too): a replica sharing the store, then one in
// fallback (since when, why), then a failed read, and a gateway without [cluster] (the line takes no room).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
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
    const current: { cluster: unknown; fails: string | undefined } = { cluster: SHARED, fails: undefined };
    // The feed reads the line from its cluster source each tick and sends it when it changed.
    gw.gateway.liveFeed.attachPanels({
      requests: undefined,
      tenants: undefined,
      modelsAdmin: undefined,
      cluster: () => {
        if (current.fails !== undefined) throw new Error(current.fails);
        return current.cluster;
      },
    });
    try {
      await page.goto(`${gw.url}/admin/`);
      await page.locator('#cluster[data-store="shared"]').waitFor();
      const line = (): Promise<string> => page.locator('#cluster-line').innerText();
      assert.match(
        await line(),
        /Replica gw-1 · shares the store · 3 live replicas · 2 leases held · 1 waiting · 0 store losses · publishes the site's mesh record/,
      );
      current.cluster = FALLBACK;
      await page.locator('#cluster[data-store="fallback"]').waitFor();
      assert.match(
        await line(),
        /store lost since 2026-12-02T15:00:00.000Z \(Command timed out\): each node's slots and each tenant limit are this replica's share/,
      );
      assert.match(await line(), /1 store losses/);
      current.fails = 'boom';
      await page.locator('#cluster-error').waitFor();
      assert.match(await page.locator('#cluster-error').innerText(), /could not be read: boom/);
      assert.equal(await page.locator('#fleet').isVisible(), true, 'the rest of the page stays');
      current.fails = undefined;
      current.cluster = undefined;
      await page.locator('#cluster[data-state="none"]').waitFor({ state: 'attached' });
      assert.equal(await page.locator('#cluster').isVisible(), false, 'without [cluster] the line takes no room');
      assert.deepEqual(problems, []);
    } finally {
      await page.close();
    }
  },
);

test("against a gateway's own figures without [cluster]: no cluster line", { skip: SKIP }, async () => {
  assert.ok(browser);
  const own = await startInProcessGateway(gatewayToml([{ name: 'gpu-1', url: 'http://127.0.0.1:9/', kind: 'vllm' }]), {
    logLevel: 'warn',
  });
  const page = await browser.context.newPage();
  try {
    await page.goto(`${own.url}/admin/`);
    await page.locator('#feed-status[data-state="live"]').waitFor();
    await page.locator('#cluster[data-state="none"]').waitFor({ state: 'attached' });
    assert.equal(await page.locator('#cluster').isVisible(), false);
  } finally {
    await page.close();
    await own.close();
  }
});
