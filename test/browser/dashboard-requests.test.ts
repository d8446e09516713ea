// The dashboard's Requests view and actions in real Chromium, over the demo fleet: the last
// requests listed live, filtered by status, model and node on the gateway, a request opened to its
// attempts and the routing decision each got (the policy, the reason, every candidate's score, the
// chosen one marked, the tried node excluded with why); the node table's last error shows a failed
// request with a ticking age and "no error" is not red; reload and model load / unload with their
// answers in words beside their buttons (an unload asked first); a caller who may not act sees the buttons disabled and why; one time zone (UTC);
// a narrow window (400 px) without sideways scrolling of the page; the favicon.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { DEMO_FLEET, demoGatewayToml } from '#src/cli/demo.ts';
import { chromiumPath, launchChromium, PAGE_TIMEOUT_MS, type Browser, skipWithoutChromium } from '#test/fixtures/browser.ts';
import { eventually } from '#test/fixtures/http.ts';
import { startFleetAndGateway, type FleetAndGateway } from '#test/fixtures/in-process-fleet.ts';
import { startInProcessGateway } from '#test/fixtures/in-process.ts';

const CHROMIUM = chromiumPath();
const SKIP = skipWithoutChromium();
const RESULTS = 'test-results';

let browser: Browser | undefined;
let demo: FleetAndGateway | undefined;

before(async () => {
  if (CHROMIUM === undefined) return;
  mkdirSync(RESULTS, { recursive: true });
  const fast = (toml: string): string =>
    toml.replace('interval = "2s"', 'interval = "500ms"').replace('timeout = "1s"', 'timeout = "60s"');
  demo = await startFleetAndGateway(DEMO_FLEET, (sim) => fast(demoGatewayToml(sim.nodes, 0)), { logLevel: 'warn' });
  browser = await launchChromium(CHROMIUM);
});

after(async () => {
  await browser?.close();
  await demo?.close();
});

async function chat(url: string, model: string, id: string): Promise<number> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-request-id': id },
    body: JSON.stringify({ model, max_tokens: 4, messages: [{ role: 'user', content: 'hello' }] }),
    signal: AbortSignal.timeout(60_000),
  });
  await res.text();
  return res.status;
}

test('the Requests view lists, filters and opens requests; the actions answer in words', { skip: SKIP }, async () => {
  assert.ok(browser && demo);
  const { sim, gw } = demo;
  const page = await browser.context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(error.message));
  await page.goto(`${gw.url}/admin/`);
  await page.locator('#feed-status[data-state="live"]').waitFor();
  await page.locator('#fleet tr[data-node="vllm-a"]').waitFor();

  // A node that answers 500: requests fail over to the other replica, and the failure shows on its row.
  sim.node('vllm-a').setFaults({ inference: 'error500' });
  for (let i = 0; i < 4; i++) assert.equal(await chat(gw.url, 'llama-3.1-8b-instruct', `llama-${i}`), 200);
  assert.equal(await chat(gw.url, 'qwen3-8b', 'qwen-1'), 200);
  assert.equal(await chat(gw.url, 'no-such-model', 'unknown-1'), 404);
  await eventually(async () => (await page.locator('#requests tr.request').count()) >= 6, PAGE_TIMEOUT_MS, 'six requests listed');
  assert.equal(await page.locator('#requests tr.request').first().getAttribute('data-request-id'), 'unknown-1', 'newest first');
  assert.match(await page.locator('#requests tr[data-request-id="unknown-1"]').innerText(), /404/);

  // Filters, applied by the gateway.
  await page.locator('#requests-filters select[name="status"]').selectOption('4xx');
  await eventually(async () => (await page.locator('#requests tr.request').count()) === 1, PAGE_TIMEOUT_MS, 'only the 404');
  assert.equal(await page.locator('#requests tr.request').getAttribute('data-request-id'), 'unknown-1');
  await page.locator('#requests-filters select[name="status"]').selectOption('');
  await page.locator('#requests-filters select[name="model"]').selectOption('qwen3-8b');
  // The list shown until the filtered one arrives may itself be one row (the 404 of the filter before):
  // wait for the qwen request alone, not for any single row.
  const onlyRow = async (): Promise<string | null> =>
    (await page.locator('#requests tr.request').count()) === 1
      ? await page.locator('#requests tr.request').getAttribute('data-request-id')
      : null;
  await eventually(async () => (await onlyRow()) === 'qwen-1', PAGE_TIMEOUT_MS, 'only the qwen request');
  await page.locator('#requests-filters select[name="model"]').selectOption('');
  await page.locator('#requests-filters select[name="node"]').selectOption('vllm-a');
  // The unfiltered list is still shown until the filtered one arrives: wait for the filtered rows themselves.
  const listedIds = (): Promise<string[]> =>
    page.evaluate<string[]>(
      `[...document.querySelectorAll('#requests tr.request')].map((e) => e.getAttribute('data-request-id'))`,
    );
  await eventually(
    async () => {
      const ids = await listedIds();
      return ids.length >= 1 && ids.every((id) => id.startsWith('llama-'));
    },
    PAGE_TIMEOUT_MS,
    'the requests vllm-a failed, and only those',
  );
  const failedOver = await page.locator('#requests tr.request').first().getAttribute('data-request-id');
  assert.match(String(failedOver), /^llama-/);
  await page.locator('#requests-filters select[name="node"]').selectOption('');
  await eventually(async () => (await page.locator('#requests tr.request').count()) >= 6, PAGE_TIMEOUT_MS, 'all again');

  // A failed-over request opened: both attempts, and the routing decision of each.
  await page.locator(`#requests tr[data-request-id="${failedOver}"]`).click();
  const detail = page.locator('#requests .request-detail');
  await detail.waitFor();
  const attrs = (selector: string, name: string): Promise<string[]> =>
    page.evaluate<string[]>(
      `[...document.querySelectorAll(${JSON.stringify(selector)})].map((e) => e.getAttribute(${JSON.stringify(name)}))`,
    );
  assert.deepEqual(await attrs('#requests .request-detail ol.attempts > li', 'data-outcome'), ['http_5xx', 'success']);
  const first = detail.locator('ol.attempts > li[data-attempt="0"]');
  assert.equal(await first.locator('.chosen-node').innerText(), 'vllm-a');
  assert.ok((await first.locator('.route-reason').innerText()).length > 0, 'the reason shown');
  assert.deepEqual(
    (await attrs('#requests .request-detail li[data-attempt="0"] table.scores tbody tr', 'data-node')).sort(),
    ['vllm-a', 'vllm-b'],
    'every candidate scored',
  );
  assert.equal(await first.locator('table.scores tr[data-chosen="yes"]').getAttribute('data-node'), 'vllm-a');
  const second = detail.locator('ol.attempts > li[data-attempt="1"]');
  assert.equal(await second.locator('table.excluded tr[data-node="vllm-a"]').getAttribute('data-code'), 'already_tried');

  // The node table: the failed request in vllm-a's last error, with an age that ticks; a node without errors says so, not in red.
  const errorCell = page.locator('#fleet tr[data-node="vllm-a"] td.error');
  await eventually(
    async () => /request failed: http_5xx 500/.test(await errorCell.innerText()),
    PAGE_TIMEOUT_MS,
    'the failed request in the last-error column',
  );
  const ageText = async (): Promise<string> => page.locator('#fleet tr[data-node="vllm-a"] td.error .age').innerText();
  const before = await ageText();
  await eventually(async () => (await ageText()) !== before, PAGE_TIMEOUT_MS, 'the age to tick');
  const quiet = page.locator('#fleet tr[data-node="sglang"] td.no-error');
  assert.equal(await quiet.innerText(), 'no error');
  const colour = (selector: string): Promise<string> =>
    page.evaluate<string>(`getComputedStyle(document.querySelector(${JSON.stringify(selector)})).color`);
  const quietColour = await colour('#fleet tr[data-node="sglang"] td.no-error');
  assert.notEqual(quietColour, await colour('#fleet tr[data-node="vllm-a"] td.error'), '"no error" is not in the error colour');
  assert.doesNotMatch(await page.locator('#fleet').innerText(), /\/ \?/, 'no "n / ?" for unknown slots');

  // One time zone: UTC, said once; the request times are the log's UTC times.
  assert.match(await page.locator('header .tz').innerText(), /UTC/);
  assert.match(await page.locator('#requests tr.request td.time').first().innerText(), /^\d\d:\d\d:\d\d\.\d{3}$/);

  // Actions: a reload, and a model load then unload on the router (asked first), each answered in words beside its button.
  await page.locator('#reload-button').click();
  const reloaded = page.locator('#reload-button-outcome');
  await eventually(
    async () => /config reloaded/.test(await reloaded.innerText().catch(() => '')),
    PAGE_TIMEOUT_MS,
    'the reload answer',
  );
  const gemma = page.locator('#models td.model-actions[data-model="gemma-3-4b"]');
  const load = gemma.locator('button[data-action="load"]');
  await load.waitFor();
  await load.click();
  // A load asks first only on a node at its max (it unloads an idle model to make room).
  if ((await gemma.locator('.action-confirm').count()) > 0)
    await gemma.locator('.action-confirm button[data-confirm="yes"]').click();
  await eventually(
    async () => /^✔ (done|already): load gemma-3-4b on llamacpp-router/.test(await gemma.locator('.action-outcome').innerText()),
    PAGE_TIMEOUT_MS,
    'the load answer',
  );
  const unload = gemma.locator('button.action[data-action="unload"]');
  await unload.waitFor({ timeout: PAGE_TIMEOUT_MS });
  await unload.click();
  await gemma.locator('.action-confirm button[data-confirm="yes"]').click();
  await eventually(
    async () => /unload gemma-3-4b on llamacpp-router/.test(await gemma.locator('.action-outcome').innerText()),
    PAGE_TIMEOUT_MS,
    'the unload answer',
  );

  // A narrow window: the page itself does not scroll sideways (wide tables scroll in their own box).
  await page.setViewportSize({ width: 400, height: 900 });
  await eventually(
    async () => (await page.evaluate<number>('document.documentElement.scrollWidth')) <= 400,
    PAGE_TIMEOUT_MS,
    'no sideways scroll at 400 px',
  );
  await page.screenshot({ path: `${RESULTS}/dashboard-narrow.png`, fullPage: true });

  // The favicon.
  assert.equal(await page.locator('link[rel="icon"]').getAttribute('href'), './ui/favicon.svg');
  const icon = await fetch(`${gw.url}/admin/ui/favicon.svg`);
  assert.equal(icon.status, 200);
  assert.equal(icon.headers.get('content-type'), 'image/svg+xml');
  await icon.text();
  assert.deepEqual(problems, []);
  await page.close();
});

test('a caller who may not act sees the buttons disabled, and why', { skip: SKIP }, async () => {
  assert.ok(browser && demo);
  const page = await browser.context.newPage();
  // Through a proxy without [admin] token: reads are open, changes are not.
  await page.setExtraHTTPHeaders({ 'x-forwarded-for': '203.0.113.7' });
  await page.goto(`${demo.gw.url}/admin/`);
  await page.locator('#feed-status[data-state="live"]').waitFor();
  await eventually(
    async () => /Actions are off: .*token/.test(await page.locator('#action-result').innerText()),
    PAGE_TIMEOUT_MS,
    'why the actions are off',
  );
  assert.equal(await page.locator('#reload-button').isDisabled(), true);
  assert.match(String(await page.locator('#reload-button').getAttribute('title')), /^not allowed: .*token/);
  await page.close();
});

test('a sleeping node is woken from its row, and the answer said in words', { skip: SKIP }, async () => {
  assert.ok(browser);
  // Nothing listens at the node's address, so it fails its probes and is asleep; its wake is a program that succeeds.
  const toml = [
    '[server]\nlisten = "127.0.0.1:0"',
    '[health]\ninterval = "300ms"\nfail_threshold = 1',
    '[[nodes]]\nname = "sleepy"\nurl = "http://127.0.0.1:9"\nkind = "vllm"\nwake = { command = ["/bin/true"] }\nwake_timeout = "60s"',
  ].join('\n');
  const gw = await startInProcessGateway(toml, { logLevel: 'warn' });
  const page = await browser.context.newPage();
  try {
    await page.goto(`${gw.url}/admin/`);
    await page.locator('#fleet tr[data-node="sleepy"][data-state="asleep"]').waitFor({ timeout: PAGE_TIMEOUT_MS });
    const wake = page.locator('#fleet tr[data-node="sleepy"] button[data-action="wake"]');
    await eventually(async () => !(await wake.isDisabled()), PAGE_TIMEOUT_MS, 'the wake button enabled');
    const answer = page.locator('#fleet tr[data-node="sleepy"] .action-outcome');
    await wake.click();
    await eventually(
      async () => /wake sleepy: wake sent \(202\)/.test(await answer.innerText().catch(() => '')),
      PAGE_TIMEOUT_MS,
      'the wake answer',
    );
    await eventually(async () => !(await wake.isDisabled()), PAGE_TIMEOUT_MS, 'the wake button enabled again');
    await wake.click();
    await eventually(
      async () => /wake sleepy: a wake was sent already/.test(await answer.innerText()),
      PAGE_TIMEOUT_MS,
      'the second wake is in its window',
    );
  } finally {
    await page.close();
    await gw.close();
  }
});
