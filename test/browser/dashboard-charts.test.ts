// The Traffic charts in real Chromium with requests that take up to 20 s (issue 43, item 2): at
// 1440 and at 420 px every y tick label of the latency and time-to-first-byte charts is a whole
// number with its unit (seconds above 10,000 ms), no wider than its axis (no digits cut by the
// gutter); an idle bucket between requests is a gap (null, never joined); and each legend shows its
// newest value without the cursor on the chart (not "--").

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { chromiumPath, launchChromium, PAGE_TIMEOUT_MS, type Browser, skipWithoutChromium } from '#test/fixtures/browser.ts';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { eventually } from '#test/fixtures/http.ts';
import { startFleetAndGateway, type FleetAndGateway } from '#test/fixtures/in-process-fleet.ts';

const CHROMIUM = chromiumPath();
const SKIP = skipWithoutChromium();
const RESULTS = 'test-results';

// `quick` answers at once; `slow` takes 20 s to its first token (the longest requests).
const FLEET = `
[[node]]
name = "quick"
kind = "vllm"
models = ["quick"]
ttft = "2ms"
tokens_per_second = 1000

[[node]]
name = "slow"
kind = "vllm"
models = ["slow"]
ttft = "20s"
tokens_per_second = 1000
`;

let browser: Browser | undefined;
let rig: FleetAndGateway | undefined;

before(async () => {
  if (CHROMIUM === undefined) return;
  mkdirSync(RESULTS, { recursive: true });
  rig = await startFleetAndGateway(
    FLEET,
    (sim) => gatewayToml(sim.nodes.map((n) => ({ name: n.name, url: n.url, kind: 'vllm' }))),
    { logLevel: 'warn' },
  );
  browser = await launchChromium(CHROMIUM);
});

after(async () => {
  await browser?.close();
  await rig?.close();
});

async function chat(url: string, model: string): Promise<void> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, max_tokens: 4, messages: [{ role: 'user', content: `hello ${model}` }] }),
    signal: AbortSignal.timeout(120_000),
  });
  assert.equal(res.status, 200, await res.text());
}

/** What a chart drew on its y axis: its labels, the widest one's width and the axis's size (px). */
interface YAxis {
  readonly labels: string[];
  readonly labelWidth: number;
  readonly axisSize: number;
}

const WHOLE_WITH_UNIT = /^\d{1,3}(,\d{3})*( ms| s|\/min|\/s)$/;

test(
  'chart ticks are whole numbers with units that fit, idle buckets are gaps, legends show the newest value',
  { skip: SKIP },
  async () => {
    assert.ok(browser && rig);
    const { gw } = rig;
    const page = await browser.context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto(`${gw.url}/admin/`);
    await page.locator('#feed-status[data-state="live"]').waitFor();

    // Quick requests, then two of 20 s: they end two 10-s buckets later, with idle buckets between.
    for (let i = 0; i < 3; i++) await chat(gw.url, 'quick');
    await Promise.all([chat(gw.url, 'slow'), chat(gw.url, 'slow')]);
    await eventually(
      async () =>
        Number(
          await page
            .locator('#traffic-total')
            .getAttribute('data-total')
            .catch(() => '0'),
        ) >= 5,
      PAGE_TIMEOUT_MS,
      'the five requests in the traffic view',
    );
    const yAxis = async (chart: string): Promise<YAxis> => {
      const el = page.locator(`#traffic [data-chart="${chart}"]`);
      return {
        labels: String(await el.getAttribute('data-y-labels')).split('|'),
        labelWidth: Number(await el.getAttribute('data-y-label-width')),
        axisSize: Number(await el.getAttribute('data-y-axis-size')),
      };
    };
    await eventually(
      async () => (await yAxis('latency')).labels.some((l) => l.endsWith(' s')),
      PAGE_TIMEOUT_MS,
      'the latency axis in seconds',
    );

    for (const width of [1440, 420]) {
      await page.setViewportSize({ width, height: 900 });
      await eventually(
        async () =>
          (await page.evaluate<number>(
            `document.querySelector('#traffic [data-chart="latency"] canvas').getBoundingClientRect().width`,
          )) <= width,
        PAGE_TIMEOUT_MS,
        `the charts resized to ${width} px`,
      );
      for (const chart of ['latency', 'ttfb']) {
        const axis = await yAxis(chart);
        for (const label of axis.labels) assert.match(label, WHOLE_WITH_UNIT, `${chart} at ${width} px: "${label}"`);
        assert.ok(
          axis.labels.every((l) => l.endsWith(' s')),
          `${chart} at ${width} px reads in seconds above 10,000 ms: ${axis.labels.join(', ')}`,
        );
        const top = Number(axis.labels.at(-1)?.replace(/[^\d]/g, ''));
        assert.ok(top >= 20, `${chart}: the axis reaches the 20 s requests (${axis.labels.join(', ')})`);
        assert.equal(new Set(axis.labels).size, axis.labels.length, `${chart}: no two ticks read the same`);
        assert.ok(
          axis.labelWidth > 0 && axis.labelWidth <= axis.axisSize,
          `${chart} at ${width} px: the widest label (${axis.labelWidth} px) fits its axis (${axis.axisSize} px)`,
        );
      }
      for (const label of (await yAxis('rate')).labels) assert.match(label, WHOLE_WITH_UNIT, `rate at ${width} px: "${label}"`);
      await page.locator('#traffic').screenshot({ path: `${RESULTS}/dashboard-charts-${width}.png` });
    }

    // Idle buckets between the quick and the slow requests are gaps: null, and never joined.
    const latency = await page.evaluate<{ values: (number | null)[]; spanGaps: boolean[] }>(
      `(() => { const u = document.querySelector('#traffic [data-chart="latency"]').uplot;
      return { values: u.data[2], spanGaps: u.series.slice(1).map((s) => s.spanGaps) }; })()`,
    );
    const filled = latency.values.flatMap((v, i) => (v === null ? [] : [i]));
    assert.ok(filled.length >= 2, `two buckets with requests: ${JSON.stringify(latency.values)}`);
    const between = latency.values.slice(filled[0], filled.at(-1));
    assert.ok(between.includes(null), `an idle bucket between them is null: ${JSON.stringify(between)}`);
    assert.deepEqual(latency.spanGaps, [false, false], 'lines are not joined across gaps');

    // The legends, with the cursor nowhere near a chart: the newest values, not "--".
    await page.mouse.move(0, 0);
    const legend = async (chart: string): Promise<string[]> =>
      page.locator(`#traffic [data-chart="${chart}"] .u-legend .u-value`).allInnerTexts();
    for (const chart of ['rate', 'latency', 'ttfb']) {
      const values = await legend(chart);
      assert.ok(values.length >= 3, `${chart}: a legend`);
      for (const value of values) assert.notEqual(value.trim(), '--', `${chart}: ${values.join(' | ')}`);
      assert.match(values[0] ?? '', /^latest \d\d:\d\d:\d\d$/, `${chart}: the legend says which bucket`);
    }
    const p99 = (await legend('latency'))[2] ?? '';
    assert.match(p99, /^2\d(\.\d)? s$/, `the newest latency p99 is the 20 s requests': ${p99}`);
    // Over the chart, the bucket under the cursor, as before.
    const plot = page.locator('#traffic [data-chart="latency"] .u-over');
    const box = await plot.boundingBox();
    assert.ok(box);
    await page.mouse.move(box.x + 2, box.y + box.height / 2);
    await eventually(
      async () => !/^latest/.test((await legend('latency'))[0] ?? ''),
      PAGE_TIMEOUT_MS,
      'the hovered bucket in the legend',
    );
    assert.deepEqual(problems, []);
    await page.close();
  },
);
