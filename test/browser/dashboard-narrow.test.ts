// The dashboard in a narrow window, in real Chromium (issue 43, items 4 and 5): a gateway with every
// view filled — tenants with limits and traffic, a [mesh] with another site pinned, a router whose
// models can be loaded and unloaded, vLLM nodes, requests (one opened to its attempts), explain, the
// charts — at a 420 px viewport: the document is no wider than the viewport (only a table's own box
// scrolls sideways, every table is in one), the Fleet table puts node, health, in flight, queue and
// last error before the URL and never cuts a URL into pieces. And the Tenants view names the
// sliding count of the last 60 s and the refilling bucket apart, so "250 / 20,000 used" beside
// "20,000 admitted now" cannot read as a contradiction.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { MemoryBus } from '#src/mesh/index.ts';
import { newSiteKey } from '#src/mesh/site-key-file.ts';
import { chromiumPath, launchChromium, PAGE_TIMEOUT_MS, type Browser, skipWithoutChromium } from '#test/fixtures/browser.ts';
import { gatewayToml, meshToml } from '#test/fixtures/gateway-configs.ts';
import { eventually } from '#test/fixtures/http.ts';
import { startFleetAndGateway, type FleetAndGateway } from '#test/fixtures/in-process-fleet.ts';
import { simRouter } from '#test/fixtures/router-fleet.ts';
import { tenantsToml } from '#test/fixtures/tenant-gateway.ts';

const CHROMIUM = chromiumPath();
const SKIP = skipWithoutChromium();
const RESULTS = 'test-results';
const WIDTH = 420;
const KEY = 'sk-narrow-window-team-alpha-0001';

const FLEET = `
[[node]]
name = "vllm-with-a-rather-long-name-a"
kind = "vllm"
models = ["llama-3.1-8b-instruct"]
ttft = "2ms"

[[node]]
name = "vllm-b"
kind = "vllm"
models = ["llama-3.1-8b-instruct"]
ttft = "2ms"
${simRouter({
  modelsMax: 2,
  models: [
    ['qwen3-8b', 'loaded'],
    ['gemma-3-4b', 'unloaded'],
  ],
})}`;

const own = newSiteKey();
const other = newSiteKey();
const bus = new MemoryBus();

let browser: Browser | undefined;
let rig: FleetAndGateway | undefined;

before(async () => {
  if (CHROMIUM === undefined) return;
  mkdirSync(RESULTS, { recursive: true });
  const tenants = tenantsToml([
    {
      name: 'team-alpha-with-a-long-name',
      keys: [KEY],
      priority: 'interactive',
      max_concurrent: 8,
      requests_per_minute: 600,
      tokens_per_minute: 20_000,
      tokens_per_day: 1_000_000,
    },
    { name: 'nightly-batch', keys: ['sk-narrow-window-batch-0002'], priority: 'batch' },
  ]);
  const mesh = meshToml(
    'site-a',
    [
      { id: 'site-a', publicKey: own.publicKey },
      // Pinned, never heard from: a row in the Sites view.
      { id: 'site-b-far-away', publicKey: other.publicKey },
    ],
    { more: ['heartbeat = "500ms"', 'freshness = "10s"'] },
  );
  rig = await startFleetAndGateway(
    FLEET,
    (sim) =>
      gatewayToml(
        [
          { name: 'vllm-with-a-rather-long-name-a', url: sim.url('vllm-with-a-rather-long-name-a'), kind: 'vllm' },
          { name: 'vllm-b', url: sim.url('vllm-b'), kind: 'vllm' },
          { name: 'router', url: sim.url('router'), kind: 'llamacpp' },
        ],
        `${tenants}\n${mesh}\n`,
      ),
    {
      logLevel: 'warn',
      meshGossip: { key: own, transport: (self) => bus.transport('peer-site-a', self.peerId), replaySinceMs: 0 },
    },
  );
  browser = await launchChromium(CHROMIUM);
});

after(async () => {
  await browser?.close();
  await rig?.close();
});

async function chat(url: string, model: string, id: string): Promise<void> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}`, 'x-request-id': id },
    body: JSON.stringify({ model, max_tokens: 16, messages: [{ role: 'user', content: `hello from ${id}` }] }),
    signal: AbortSignal.timeout(60_000),
  });
  assert.equal(res.status, 200, await res.text());
}

test('at 420 px the page is no wider than the window: only a table scrolls, in its own box', { skip: SKIP }, async () => {
  assert.ok(browser && rig);
  const { gw } = rig;
  const page = await browser.context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(error.message));
  await page.setViewportSize({ width: WIDTH, height: 900 });
  await page.goto(`${gw.url}/admin/`);
  await page.locator('#feed-status[data-state="live"]').waitFor();
  for (let i = 0; i < 4; i++) {
    await chat(gw.url, 'llama-3.1-8b-instruct', `narrow-${i}`);
    await chat(gw.url, 'qwen3-8b', `narrow-q-${i}`);
  }
  // Every view with something in it.
  await page.locator('#tenants[data-state="ok"] tr[data-tenant="team-alpha-with-a-long-name"]').waitFor();
  await page.locator('#sites[data-mesh="on"] tr[data-site="site-b-far-away"]').waitFor();
  await page.locator('#models td.model-actions[data-model="gemma-3-4b"] button[data-action="load"]').waitFor();
  await page.locator('#traffic .chart canvas').first().waitFor();
  await page.locator('#requests tr.request[data-request-id="narrow-0"]').click();
  await page.locator('#requests .request-detail').waitFor();
  await page.locator('#explain-form select[name="model"]').selectOption('llama-3.1-8b-instruct');
  await page.locator('#explain-form button').click();
  await page.locator('#explain-result').waitFor();
  await page.locator('#events li').first().waitFor();
  // An unload's question open beside its button.
  await page.locator('#models td.model-actions[data-model="qwen3-8b"] button[data-action="unload"]').click();
  await page.locator('#models td.model-actions[data-model="qwen3-8b"] .action-confirm').waitFor();

  const width = (): Promise<number> => page.evaluate<number>('document.documentElement.scrollWidth');
  await eventually(async () => (await width()) <= WIDTH, PAGE_TIMEOUT_MS, `the page no wider than ${WIDTH} px`);
  assert.ok((await width()) <= WIDTH, `document width ${await width()} px at a ${WIDTH} px viewport`);
  // Every table sits in a box of its own that scrolls, and nothing else is wider than the window.
  const loose = await page.evaluate<string[]>(`[...document.querySelectorAll('table:not(.u-legend)')]
    .filter((t) => !t.parentElement.closest('.scroll')).map((t) => t.className || t.id || t.parentElement.id)`);
  assert.deepEqual(loose, [], 'every table in a scroll box');
  const wide = await page.evaluate<string[]>(`[...document.querySelectorAll('main *')]
    .filter((e) => !e.closest('.scroll') && e.getBoundingClientRect().right > ${WIDTH} + 0.5)
    .map((e) => e.tagName + (e.id ? '#' + e.id : '') + '.' + e.className)`);
  assert.deepEqual(wide, [], 'nothing but a table box reaches past the window');
  assert.ok(
    (await page.evaluate<number>(`document.querySelector('#tenants .scroll').scrollWidth`)) > WIDTH,
    'the Tenants table is wider than the window: it scrolls in its box',
  );

  // Fleet: the columns that matter first, the URL last and whole (one line).
  const heads = await page.locator('#fleet thead th').allInnerTexts();
  assert.deepEqual(heads.slice(0, 5), ['node', 'health', 'in flight / slots', 'queue', 'last error']);
  assert.equal(heads.at(-1), 'url');
  // (Page code is passed as text: this project's TypeScript has no DOM types.)
  const url = await page.evaluate<{ height: number; lineHeight: number; whiteSpace: string; fits: boolean }>(`(() => {
    const td = document.querySelector('#fleet tr[data-node="vllm-b"] td.url');
    const style = getComputedStyle(td);
    const text = td.querySelector('bdi').getBoundingClientRect();
    return { height: text.height, lineHeight: parseFloat(style.lineHeight) || parseFloat(style.fontSize) * 1.4, whiteSpace: style.whiteSpace, fits: td.scrollWidth <= td.clientWidth + 1 };
  })()`);
  assert.equal(url.whiteSpace, 'nowrap', 'a URL is never wrapped');
  assert.ok(url.height < 1.5 * url.lineHeight, `the URL on one line (${url.height} px, line ${url.lineHeight} px)`);
  assert.ok(url.fits, 'the URL whole in its cell');
  await page.screenshot({ path: `${RESULTS}/dashboard-narrow-420.png`, fullPage: true });
  for (const view of ['fleet', 'models', 'tenants', 'sites'])
    await page.locator(`#${view}`).screenshot({ path: `${RESULTS}/dashboard-narrow-420-${view}.png` });
  assert.deepEqual(problems, []);
  await page.close();
});

test('the Tenants view names the sliding count of the last 60 s and the refilling bucket apart', { skip: SKIP }, async () => {
  assert.ok(browser && rig);
  const page = await browser.context.newPage();
  await page.goto(`${rig.gw.url}/admin/`);
  const row = page.locator('#tenants tr[data-tenant="team-alpha-with-a-long-name"]');
  await eventually(
    async () =>
      /^[1-9][\d,]* \/ 20,000$/.test(
        await row
          .locator('[data-field="minute-tokens"]')
          .innerText()
          .catch(() => ''),
      ),
    PAGE_TIMEOUT_MS,
    'tokens used in the last 60 s against the limit',
  );
  const head = await page.locator('#tenants thead').innerText();
  assert.match(await page.locator('#tenants-used-head').innerText(), /used in the last 60 s/);
  assert.match(await page.locator('#tenants-bucket-head').innerText(), /admitted now.*refilling bucket/s);
  assert.doesNotMatch(head, /this minute|tokens left\b(?! today)/, 'no "this minute" beside "tokens left"');
  assert.match(head, /tokens left today/);
  // The bucket's cell says how it refills; the note under the table says why the two need not add up.
  assert.match(
    String(await row.locator('[data-field="remaining-tokens"]').locator('xpath=..').getAttribute('title')),
    /bucket of 20,000 tokens per minute: refills continuously \(333\.3 a second\)/,
  );
  assert.match(await row.locator('[data-field="remaining-tokens"]').innerText(), /^[\d,]+$/);
  assert.match(
    await page.locator('#tenants-terms').innerText(),
    /Used in the last 60 s is a sliding count.*Admitted now is what a per-minute limit's bucket lets in at this moment: it refills continuously/s,
  );
  await page.close();
});
