// The operator dashboard in real Chromium: the demo fleet behind an in-process gateway, the page at
// /admin, and everything it promises — every node and model shown, a failing node's row changing
// state without a reload, charts that move with traffic, explain, the lost-feed notice, the token
// prompt — then a 1,000-node fleet for the render costs. Screenshots go to test-results/.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { DEMO_FLEET, demoGatewayToml } from '#src/cli/demo.ts';
import {
  chromiumPath,
  launchChromium,
  NAVIGATION_TIMEOUT_MS,
  PAGE_TIMEOUT_MS,
  type Browser,
  skipWithoutChromium,
} from '#test/fixtures/browser.ts';
import { startControlPlaneFleet } from '#test/fixtures/control-plane-fleet.ts';
import { eventually, timedEventually } from '#test/fixtures/http.ts';
import { startFleetAndGateway, startGateway, type FleetAndGateway } from '#test/fixtures/in-process-fleet.ts';

const CHROMIUM = chromiumPath();
const SKIP = skipWithoutChromium();
const RESULTS = 'test-results';
const TOKEN = 'dashboard-test-admin-token';
const MODELS = [
  'llama-3.1-8b-instruct',
  'qwen3-8b',
  'gemma-3-4b',
  'llama3.2:latest',
  'nomic-embed-text:latest',
  'qwen2.5-7b-instruct',
];

/**
 * The demo gateway with faster loops, so a failing node shows within a few seconds, and a probe
 * timeout no busy machine reaches: a node of the demo fleet turns unhealthy only when the test
 * makes it fail (a sim node that fails health answers 503 at once), never because a loaded event
 * loop answered a probe late.
 */
function fastDemoToml(toml: string): string {
  const fast = toml
    .replace('interval = "2s"', 'interval = "300ms"')
    .replace('timeout = "1s"', 'timeout = "60s"')
    .replace('interval = "3s"', 'interval = "1s"\ntimeout = "60s"');
  assert.equal(fast.match(/timeout = "60s"/g)?.length, 2, 'the demo config has the [health] and [discovery] lines this replaces');
  return fast;
}

let browser: Browser | undefined;
let demo: FleetAndGateway | undefined;

before(async () => {
  if (CHROMIUM === undefined) return;
  mkdirSync(RESULTS, { recursive: true });
  demo = await startFleetAndGateway(DEMO_FLEET, (sim) => fastDemoToml(demoGatewayToml(sim.nodes, 0)), { logLevel: 'warn' });
  browser = await launchChromium(CHROMIUM);
});

after(async () => {
  await browser?.close();
  await demo?.close();
});

test(
  'the dashboard shows the fleet live, moves with traffic, explains, and says when the feed is lost',
  { skip: SKIP },
  async () => {
    assert.ok(browser && demo);
    const { sim, gw } = demo;
    const page = await browser.context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    await page.goto(`${gw.url}/admin`);
    assert.equal(new URL(page.url()).pathname, '/admin/', '/admin redirects to /admin/');
    await page.locator('#feed-status[data-state="live"]').waitFor();
    for (const node of sim.nodes) {
      const row = page.locator(`#fleet tr[data-node="${node.name}"]`);
      await row.waitFor();
      assert.match(await row.innerText(), new RegExp(node.name));
      assert.equal(await row.locator('td.source').innerText(), 'static', 'the [[nodes]] list is the source');
    }
    for (const model of MODELS) await page.locator(`#models tr[data-model="${model}"]`).waitFor();
    // Alone (no [mesh]): the Sites view says so, and the Models view has no remote-sites column.
    assert.match(await page.locator('#sites[data-mesh="off"] #sites-alone').innerText(), /runs alone/);
    assert.equal(await page.locator('#models th', { hasText: 'remote sites' }).count(), 0);
    await page.locator('#fleet tr[data-node="vllm-b"][data-state="healthy"]').waitFor();
    assert.match(await page.locator('#fleet tr[data-node="vllm-b"]').innerText(), /healthy/);

    // Without a reload: a marker set in the page now must still be there after the change shows.
    // (Page code is passed as text: this project's TypeScript has no DOM types.)
    await page.evaluate(`window.dashboardTestMarker = 'same page'`);
    sim.node('vllm-b').setFaults({ health: 'fail' });
    await page.locator('#fleet tr[data-node="vllm-b"]:not([data-state="healthy"])').waitFor();
    const failedState = await page.locator('#fleet tr[data-node="vllm-b"]').getAttribute('data-state');
    assert.ok(failedState === 'degraded' || failedState === 'dead', `vllm-b shows ${failedState}`);
    assert.match(await page.locator('#fleet tr[data-node="vllm-b"]').innerText(), new RegExp(failedState));
    await page.locator('#events li[data-node="vllm-b"][data-kind="health"]').first().waitFor();
    assert.equal(await page.evaluate('window.dashboardTestMarker'), 'same page');

    // Traffic: the charts count the requests sent, and are drawn again as more arrive.
    assert.equal(await page.locator('#no-traffic').count(), 1, 'no traffic yet');
    const total = async (): Promise<number> =>
      (await page.locator('#traffic-total').count()) === 1
        ? Number(await page.locator('#traffic-total').getAttribute('data-total'))
        : 0;
    const rateChart = (): Promise<string> =>
      page.evaluate<string>(`document.querySelector('#traffic [data-chart="rate"] canvas').toDataURL()`);
    const sendChats = async (count: number): Promise<void> => {
      for (let i = 0; i < count; i++) {
        const res = await fetch(`${gw.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            model: 'llama-3.1-8b-instruct',
            max_tokens: 4,
            messages: [{ role: 'user', content: `hello ${i}` }],
          }),
        });
        assert.equal(res.status, 200);
        await res.text();
      }
    };
    await sendChats(6);
    await eventually(async () => (await total()) >= 6, PAGE_TIMEOUT_MS, 'the traffic view to count 6 requests');
    assert.equal(await page.locator('#traffic .chart canvas').count(), 3, 'three uPlot charts are drawn');
    const firstDrawing = await rateChart();
    await sendChats(6);
    await eventually(async () => (await total()) >= 12, PAGE_TIMEOUT_MS, 'the traffic view to count 12 requests');
    await eventually(
      async () => (await rateChart()) !== firstDrawing,
      PAGE_TIMEOUT_MS,
      'the request-rate chart to be drawn again',
    );

    // Explain: a per-node table of verdicts.
    await page.locator('#explain-form select[name="model"]').selectOption('qwen3-8b');
    await page.locator('#explain-form input[name="prompt_tokens"]').fill('2000');
    await page.locator('#explain-form button').click();
    await page.locator('#explain-result').waitFor();
    assert.equal(await page.locator('#explain-result tr[data-node]').count(), sim.nodes.length);
    assert.equal(await page.locator('#explain-result tr[data-node="llamacpp-router"]').getAttribute('data-verdict'), 'eligible');
    assert.equal(await page.locator('#explain-result tr[data-node="vllm-a"]').getAttribute('data-verdict'), 'excluded');
    await page.screenshot({ path: `${RESULTS}/dashboard.png`, fullPage: true });

    // A lost feed: the gateway ends the stream and refuses it for a while; the page says so, backs
    // off, and is live again once the feed answers.
    assert.equal(gw.gateway.liveFeed.clientCount(), 1);
    await page.route('**/admin/events', (route) => route.abort('connectionrefused'));
    gw.gateway.liveFeed.close();
    await page.locator('#feed-status[data-state="lost"]').waitFor();
    assert.match(await page.locator('#feed-status').innerText(), /feed lost.*reconnecting in \d+ s/);
    await page.unroute('**/admin/events');
    await page.locator('#feed-status[data-state="live"]').waitFor();
    assert.equal(await page.evaluate('window.dashboardTestMarker'), 'same page');
    sim.node('vllm-b').setFaults({ health: 'none' });
    await page.locator('#fleet tr[data-node="vllm-b"][data-state="healthy"]').waitFor();
    assert.deepEqual(problems, []);
    await page.close();
  },
);

test('with [admin] token set, the page asks for the token and keeps it in session storage only', { skip: SKIP }, async () => {
  assert.ok(browser && demo);
  const gw = await startGateway(`${fastDemoToml(demoGatewayToml(demo.sim.nodes, 0))}[admin]\ntoken = "${TOKEN}"\n`, {
    logLevel: 'warn',
  });
  try {
    assert.equal((await fetch(`${gw.url}/admin/events`)).status, 401, 'the feed needs the token');
    const page = await browser.context.newPage();
    await page.goto(`${gw.url}/admin/`);
    await page.locator('#token-form').waitFor();
    assert.equal(await page.locator('#fleet').count(), 0, 'no fleet data before the token');
    await page.screenshot({ path: `${RESULTS}/dashboard-token.png` });
    await page.locator('#token-form input[name="token"]').fill('wrong-token');
    await page.locator('#token-form button').click();
    await page.locator('#token-form').getByText('That token was refused').waitFor();
    await page.locator('#token-form input[name="token"]').fill(TOKEN);
    await page.locator('#token-form button').click();
    await page.locator('#fleet tr[data-node="vllm-a"]').waitFor();
    const stored = await page.evaluate(() => ({
      session: sessionStorage.getItem('switchyard.adminToken'),
      local: localStorage.length,
    }));
    assert.deepEqual(stored, { session: TOKEN, local: 0 });
    await page.close();
  } finally {
    await gw.close();
  }
});

// Its own bound, past npm test's 300 s per test: on a busy 2-core machine (two suites at once) this
// test alone was seen to take 220 s (a screenshot of the 1,000 rows 70 s of it); the file's hard
// bound (scripts/test.ts, 600 s) still stops it.
test('1,000 nodes: first render and per-update cost, measured in the browser', { skip: SKIP, timeout: 480_000 }, async () => {
  assert.ok(browser);
  const fleet = await startControlPlaneFleet(1000, 4);
  const nodes = fleet.urls.map(
    (url, i) => `[[nodes]]\nname = "cp-${String(i).padStart(4, '0')}"\nurl = "${url}"\nkind = "vllm"\n`,
  );
  // The 1,000 upstreams live in this process, next to the gateway and playwright's client: on a
  // busy machine one probe round is answered seconds late, and probing every 2 s alone can take
  // all the CPU this process gets. So: a probe timeout no load reaches, which keeps every row
  // healthy until the test fails a node's health (a 503 at once) — "all 1,000 healthy" is a state
  // that holds, not a window between two late probes — and loops slow enough to leave the page
  // its share (a failed node shows within one 30 s health round). The page opens once the
  // gateway's first rounds (2,000 requests at once) are done.
  const gw = await startGateway(
    `[server]\nlisten = "127.0.0.1:0"\n[health]\ninterval = "30s"\ntimeout = "120s"\n[discovery]\ninterval = "120s"\ntimeout = "120s"\n${nodes.join('')}`,
    { logLevel: 'warn' },
  );
  const started = performance.now();
  const phase = (what: string): void =>
    void process.stdout.write(`# dashboard with 1000 nodes: ${what} after ${Math.round(performance.now() - started)} ms\n`);
  try {
    await timedEventually(
      async () => (await gw.health()).healthy === 1000,
      2 * PAGE_TIMEOUT_MS,
      'the gateway to see 1000 nodes healthy',
      500,
    );
    phase('gateway sees 1000 healthy');
    const page = await browser.context.newPage();
    // What matters is the rows, waited for next: not the page's load event (over a minute on a
    // machine at load average 40).
    await page.goto(`${gw.url}/admin/`, { waitUntil: 'commit' });
    phase('page navigated');
    // Counted four times a second (a count over 1,000 rows every 20 ms would itself be load).
    const rows = (selector: string, timeout: number): Promise<unknown> =>
      timedEventually(
        async () => (await page.locator(selector).count()) === 1000,
        timeout,
        `1000 rows matching ${selector}`,
        250,
      );
    await rows('#fleet tr[data-node]', 2 * PAGE_TIMEOUT_MS);
    phase('1000 rows');
    await rows('#fleet tr[data-state="healthy"]', 2 * PAGE_TIMEOUT_MS);
    phase('1000 healthy rows');
    const updatesBefore = await page.evaluate<number>('window.__switchyardTimings.updates.length');
    // Three nodes fail at once; each shows on its own next probe (a large fleet's rounds are
    // spread over the interval), so each is one node's change on the page.
    for (const index of [100, 500, 900]) fleet.failHealth(index);
    for (const index of [100, 500, 900]) {
      await page.locator(`#fleet tr[data-node="cp-0${index}"]:not([data-state="healthy"])`).waitFor();
      phase(`cp-0${index} shown failing`);
    }
    const t = await page.evaluate<{ firstRenderMs: number; firstRenderCostMs: number; updates: number[] }>(
      'window.__switchyardTimings',
    );
    const later = t.updates.slice(updatesBefore);
    const sorted = [...t.updates].sort((a, b) => a - b);
    const figures = {
      firstRenderMs: Math.round(t.firstRenderMs),
      firstRenderCostMs: Math.round(t.firstRenderCostMs),
      updates: t.updates.length,
      medianUpdateMs: Number((sorted[Math.floor(sorted.length / 2)] ?? 0).toFixed(1)),
      maxUpdateMs: Number((sorted.at(-1) ?? 0).toFixed(1)),
      oneNodeChangeMs: Number(Math.max(...later).toFixed(1)),
    };
    process.stdout.write(`# dashboard with 1000 nodes: ${JSON.stringify(figures)}\n`);
    await page.screenshot({ path: `${RESULTS}/dashboard-1000-nodes.png`, timeout: NAVIGATION_TIMEOUT_MS });
    phase('screenshot taken');
    // Usability bounds on the page's own work, not a benchmark: the snapshot of 1,000 nodes on
    // screen, and one node's change, each timed from the feed event that brought it to its render
    // (alone on this 2-core machine ~0.9 s and ~50 ms; at load average 50 up to 1.7 s and 1.8 s;
    // page load and the gateway's answer, which a busy machine stretches to minutes, are not in
    // these; firstRenderMs, which has them, is reported only). Speed is the bench's to measure.
    assert.ok(
      figures.firstRenderCostMs < 10_000,
      `the first render of 1,000 nodes took ${figures.firstRenderCostMs} ms after the snapshot arrived`,
    );
    assert.ok(figures.oneNodeChangeMs < 5_000, `one node's change took ${figures.oneNodeChangeMs} ms to render`);
    await page.close();
  } finally {
    await gw.close();
    phase('gateway closed');
    await fleet.close();
    phase('fleet closed');
  }
});
