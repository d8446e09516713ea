// `node scripts/dashboard-screenshot.ts [--out docs/dashboard.png] [--width 1440]`: regenerates the
// README's dashboard picture (and with `--width 420 --out docs/dashboard-420.png`, the narrow
// window's) from the demo (the fleet and gateway `switchyard demo` runs, in this process):
// some traffic — answered requests on every model, one vLLM replica answering 500 so requests fail
// over, an unknown model — then the page in headless Chromium (playwright-core and Debian's
// chromium, CHROMIUM_PATH to use another), one request opened to its attempts and routing, and a
// full-page screenshot. Nothing is drawn by hand.

import { parseArgs } from 'node:util';
import { DEMO_FLEET, demoGatewayToml } from '#src/cli/demo.ts';
import { chromiumPath, launchChromium } from '#test/fixtures/browser.ts';
import { startFleetAndGateway } from '#test/fixtures/in-process-fleet.ts';

const { values } = parseArgs({
  options: { out: { type: 'string', default: 'docs/dashboard.png' }, width: { type: 'string', default: '1440' } },
});
const executable = chromiumPath();
if (executable === undefined) {
  process.stderr.write(`no chromium at ${process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'} (set CHROMIUM_PATH)\n`);
  process.exit(2);
}
const width = Number(values.width);

const demo = await startFleetAndGateway(DEMO_FLEET, (sim) => demoGatewayToml(sim.nodes, 0), { logLevel: 'warn' });
const browser = await launchChromium(executable);
try {
  const { sim, gw } = demo;
  const chat = async (model: string, id: string, stream = false): Promise<void> => {
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': id },
      body: JSON.stringify({ model, stream, max_tokens: 16, messages: [{ role: 'user', content: `hello from ${id}` }] }),
      signal: AbortSignal.timeout(60_000),
    });
    await res.text();
  };
  const page = await browser.context.newPage();
  await page.setViewportSize({ width, height: 900 });
  await page.goto(`${gw.url}/admin/`);
  await page.locator('#feed-status[data-state="live"]').waitFor();
  const models = ['llama-3.1-8b-instruct', 'qwen3-8b', 'llama3.2:latest', 'qwen2.5-7b-instruct'];
  for (let round = 0; round < 6; round++) {
    await Promise.all(models.map((m, i) => chat(m, `demo-${round}-${i}`, i % 2 === 0)));
    await new Promise((resolve) => setTimeout(resolve, 400));
  }
  sim.node('vllm-a').setFaults({ inference: 'error500' });
  for (let i = 0; i < 4; i++) await chat('llama-3.1-8b-instruct', `failover-${i}`);
  await chat('llama-4-405b', 'unknown-model');
  // The failed-over request opened: its attempts and the routing decision each got.
  await page.locator('#fleet tr[data-node="vllm-a"] td.error').waitFor({ timeout: 60_000 });
  await page.locator('#requests tr.request[data-request-id^="failover-"]').first().waitFor({ timeout: 60_000 });
  await page.locator('#requests-filters select[name="node"]').selectOption('vllm-a');
  const failed = page.locator('#requests tr.request[data-request-id^="failover-"]').first();
  await failed.waitFor({ timeout: 60_000 });
  await failed.click();
  await page.locator('#requests .request-detail').waitFor();
  // Explain for the router's model, with its scores.
  await page.locator('#explain-form select[name="model"]').selectOption('llama-3.1-8b-instruct');
  await page.locator('#explain-form button').click();
  await page.locator('#explain-result').waitFor();
  await new Promise((resolve) => setTimeout(resolve, 1500));
  await page.screenshot({ path: values.out, fullPage: true });
  process.stdout.write(`wrote ${values.out}\n`);
} finally {
  await browser.close();
  await demo.close();
}
