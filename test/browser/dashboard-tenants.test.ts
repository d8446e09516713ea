// The dashboard's Tenants view in real Chromium, against a tenants report the test stands in for (the
// feed's tenants source, which GET /admin/tenants reads too: a TenantsReport fixture, then a changed
// one, a read that fails, an odd report, no tenants). The view shows each tenant's class, weight, key tags, limits, in flight,
// queued, usage this minute and today and what remains, and each model's queue by class and tenant;
// it follows the answers without a reload, shows a failure in its own place while the rest of the
// page stays live, and hides itself when there are no tenants.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import type { TenantReport, TenantsReport } from '#src/tenants/index.ts';
import { chromiumPath, launchChromium, type Browser, skipWithoutChromium } from '#test/fixtures/browser.ts';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startInProcessGateway, type InProcessGateway } from '#test/fixtures/in-process.ts';

const CHROMIUM = chromiumPath();
const SKIP = skipWithoutChromium();
const RESULTS = 'test-results';

const alice: TenantReport = {
  name: 'alice',
  priority: 'interactive',
  weight: 2,
  keys: ['k:3f9a1c', 'k:77be02'],
  limits: { maxConcurrent: 4, requestsPerMinute: 60, tokensPerMinute: 20_000, tokensPerDay: 100_000 },
  inFlight: 3,
  queued: 1,
  minute: { requests: 12, tokens: 4_500 },
  today: { requests: 340, promptTokens: 80_000, completionTokens: 20_000 },
  remaining: { requests: 48, tokens: 15_500, budget: 0 },
};
const batch: TenantReport = {
  name: 'nightly-batch',
  priority: 'batch',
  weight: 1,
  keys: ['k:c0ffee'],
  limits: { maxConcurrent: null, requestsPerMinute: null, tokensPerMinute: null, tokensPerDay: null },
  inFlight: 0,
  queued: 7,
  minute: { requests: 0, tokens: 0 },
  today: { requests: 5, promptTokens: 1_000, completionTokens: 250 },
  remaining: { requests: null, tokens: null, budget: null },
};
const REPORT: TenantsReport = {
  tenants: [alice, batch],
  queues: { 'llama-3.1-8b': { byClass: { interactive: 1, standard: 0, batch: 7 }, byTenant: { alice: 1, 'nightly-batch': 7 } } },
};

/** What the stubbed tenants source answers now: a report (of any shape), or a failed read. */
type Stub = { readonly kind: 'report'; readonly body: unknown } | { readonly kind: 'fails'; readonly message: string };
const json = (body: unknown): Stub => ({ kind: 'report', body });
const fails = (message: string): Stub => ({ kind: 'fails', message });

let browser: Browser | undefined;
let gw: InProcessGateway | undefined;

before(async () => {
  if (CHROMIUM === undefined) return;
  mkdirSync(RESULTS, { recursive: true });
  // Nothing listens at the node's address: the fleet view shows it, which is all the rest of the page needs.
  gw = await startInProcessGateway(gatewayToml([{ name: 'gpu-1', url: 'http://127.0.0.1:9/', kind: 'vllm' }]), {
    logLevel: 'warn',
  });
  browser = await launchChromium(CHROMIUM);
});

after(async () => {
  await browser?.close();
  await gw?.close();
});

test(
  'the Tenants view shows the report, follows it, shows failures in its place, and hides without tenants',
  { skip: SKIP },
  async () => {
    assert.ok(browser && gw);
    const page = await browser.context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    const current: { stub: Stub; asked: number } = { stub: json(REPORT), asked: 0 };
    // The feed reads the report from its tenants source (one read at a time, each tick while the view is open).
    gw.gateway.liveFeed.attachPanels({
      requests: undefined,
      modelsAdmin: undefined,
      cluster: () => undefined,
      tenants: async () => {
        current.asked += 1;
        const { stub } = current;
        if (stub.kind === 'fails') throw new Error(stub.message);
        return stub.body as TenantsReport;
      },
    });
    /** Sets what the endpoint answers and waits until the page has asked again since. */
    const answer = async (stub: Stub, shows: string): Promise<void> => {
      current.stub = stub;
      await page.locator(shows).waitFor({ state: 'attached' });
    };
    try {
      await page.goto(`${gw.url}/admin/`);
      await page.locator('#feed-status[data-state="live"]').waitFor();
      await page.locator('#fleet tr[data-node="gpu-1"]').waitFor();

      // The report, as a table: a row per tenant, limits beside what is used, nulls as "—".
      const row = (name: string) => page.locator(`#tenants tr[data-tenant="${name}"]`);
      const cell = (name: string, field: string): Promise<string> => row(name).locator(`[data-field="${field}"]`).innerText();
      await row('alice').waitFor();
      assert.equal(await page.locator('#tenants tr[data-tenant]').count(), 2);
      assert.equal(await row('alice').getAttribute('data-priority'), 'interactive');
      assert.match(await row('alice').innerText(), /interactive/);
      assert.equal(await cell('alice', 'weight'), '2');
      assert.equal(await cell('alice', 'keys'), 'k:3f9a1c, k:77be02');
      assert.equal(await cell('alice', 'in-flight'), '3 / 4');
      assert.equal(await cell('alice', 'queued'), '1');
      assert.equal(await cell('alice', 'minute-requests'), '12 / 60');
      assert.equal(await cell('alice', 'minute-tokens'), '4,500 / 20,000');
      assert.equal(await cell('alice', 'today-requests'), '340');
      assert.equal(await cell('alice', 'today-tokens'), '100,000 / 100,000');
      assert.equal(await cell('alice', 'remaining-requests'), '48');
      assert.match(await cell('alice', 'remaining-budget'), /⚠\s*0/);
      assert.equal(await row('alice').locator('[data-field="remaining-budget"]').getAttribute('data-exhausted'), 'yes');
      assert.equal(await cell('nightly-batch', 'in-flight'), '0');
      assert.equal(await cell('nightly-batch', 'today-tokens'), '1,250');
      assert.equal(await cell('nightly-batch', 'remaining-budget'), '—');
      assert.equal(await row('nightly-batch').locator('[data-field="remaining-budget"]').getAttribute('data-exhausted'), 'no');
      const queue = page.locator('#tenant-queues tr[data-model="llama-3.1-8b"]');
      assert.equal(await queue.locator('[data-class="interactive"]').innerText(), '1');
      assert.equal(await queue.locator('[data-class="batch"]').innerText(), '7');
      assert.equal(await queue.locator('[data-field="by-tenant"]').innerText(), 'alice: 1, nightly-batch: 7');
      await page.screenshot({ path: `${RESULTS}/dashboard-tenants.png`, fullPage: true });

      // Without a reload: the next answer's figures replace the last.
      await page.evaluate(`window.tenantsTestMarker = 'same page'`);
      const later: TenantsReport = {
        tenants: [{ ...alice, inFlight: 1, minute: { requests: 13, tokens: 4_600 } }, batch],
        queues: {},
      };
      await answer(json(later), '#tenants tr[data-tenant="alice"] [data-field="in-flight"]:text-is("1 / 4")');
      assert.equal(await cell('alice', 'minute-requests'), '13 / 60');
      assert.match(await page.locator('#tenant-queues-none').innerText(), /No model has requests queued/);

      // Failures show in the view, each with its reason; the feed and the fleet stay.
      await answer(fails('the store answered READONLY'), '#tenants[data-state="error"]');
      assert.match(await page.locator('#tenants-error').innerText(), /could not be read: the store answered READONLY/);
      await answer(json({ tenants: 5 }), '#tenants-error:has-text("no \\"tenants\\" list")');
      await answer(json({ tenants: [{ weight: 1 }], queues: {} }), '#tenants-error:has-text("has no name")');
      assert.equal(await page.locator('#tenants tr[data-tenant]').count(), 0, 'no stale rows beside the error');
      assert.equal(await page.locator('#feed-status').getAttribute('data-state'), 'live');
      assert.equal(await page.locator('#fleet tr[data-node="gpu-1"]').count(), 1);

      // [cluster]: whose counts — the whole site's, each replica named and an expired one marked; then this replica's alone.
      const replica = { inFlight: 0, queued: 0, requestsToday: 1 };
      const site: TenantsReport = {
        ...REPORT,
        scope: 'site',
        replicas: {
          'gw-1': { live: true, ageMs: 0, ...replica },
          'gw-2': { live: false, expired: true, ageMs: 42_000, ...replica },
        },
      };
      await answer(json(site), '#tenants-scope[data-scope="site"]');
      assert.match(
        await page.locator('#tenants-scope').innerText(),
        /Whole site, 2 replicas: gw-1, gw-2 \(expired: last seen 42 s ago/,
      );
      assert.equal(await page.locator('#tenants-scope [data-replica="gw-2"]').getAttribute('data-live'), 'no');
      await answer(
        json({ ...REPORT, scope: 'replica', store: 'unreachable', storeReason: 'Command timed out' }),
        '#tenants-scope[data-scope="replica"]',
      );
      assert.match(
        await page.locator('#tenants-scope').innerText(),
        /This replica's counts only: the store is unreachable \(Command timed out\)/,
      );
      assert.equal(await page.locator('#tenants tr[data-tenant]').count(), 2, "the replica's own rows beside it");

      // A good answer again: the table is back (without [cluster], no scope line).
      await answer(json(REPORT), '#tenants:not(:has(#tenants-scope)) tr[data-tenant="alice"]');
      // No tenants: the view takes no room.
      await answer(json({ tenants: [], queues: {} }), '#tenants[data-state="none"]');
      assert.equal(await page.locator('#tenants').isVisible(), false);
      assert.equal(await page.locator('#fleet').isVisible(), true);
      assert.equal(await page.evaluate('window.tenantsTestMarker'), 'same page');
      assert.ok(current.asked >= 9, `asked ${current.asked} times`);
      assert.deepEqual(problems, []);
    } finally {
      await page.close();
    }
  },
);

test('against the gateway’s own tenants report: a row per tenant, its key as a tag only', { skip: SKIP }, async (t) => {
  assert.ok(browser);
  const KEY = 'sk-dashboard-tenant-secret-0123456789';
  const tenants = `[[tenants]]\nname = "team-a"\nkeys = ["${KEY}"]\npriority = "interactive"\nrequests_per_minute = 30\n`;
  const own = await startInProcessGateway(gatewayToml([{ name: 'gpu-1', url: 'http://127.0.0.1:9/', kind: 'vllm' }], tenants), {
    logLevel: 'warn',
  });
  try {
    const res = await fetch(`${own.url}/admin/tenants`);
    await res.arrayBuffer();
    if (res.status === 404) return t.skip('no GET /admin/tenants on this build (the tenant ledger is not wired)');
    const page = await browser.context.newPage();
    try {
      await page.goto(`${own.url}/admin/`);
      const row = page.locator('#tenants tr[data-tenant="team-a"]');
      await row.waitFor();
      assert.equal(await row.getAttribute('data-priority'), 'interactive');
      assert.match(await row.locator('[data-field="minute-requests"]').innerText(), /^0 \/ 30$/);
      assert.notEqual((await row.locator('[data-field="keys"]').innerText()).trim(), '—', 'the key shows as a tag');
      assert.equal((await page.content()).includes(KEY), false, 'the key itself never reaches the page');
    } finally {
      await page.close();
    }
  } finally {
    await own.close();
  }
});
