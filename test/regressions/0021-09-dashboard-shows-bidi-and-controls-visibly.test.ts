// Issue 21, item 9: a model id carrying a right-to-left override (U+202E) rendered reversed in the
// dashboard — "safe\u202Egnp.exe" reads as "safeexe.png" — and other control characters vanished.
// Every string a node or peer chose is now shown isolated (<bdi>, unicode-bidi: isolate) with its
// control and bidi characters made visible by the same visible-text.js the CLI uses. Real Chromium
// (skipped when none is installed, as the other browser tests).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chromiumPath, launchChromium } from '#test/fixtures/browser.ts';
import { startFleetAndGateway } from '#test/fixtures/in-process-fleet.ts';
import { demoGatewayToml } from '#src/cli/demo.ts';

const CHROMIUM = chromiumPath();
const SKIP =
  CHROMIUM === undefined
    ? `no chromium binary at ${process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'} (set CHROMIUM_PATH)`
    : false;

const REVERSED = 'safe\u202Egnp.exe';
const COLOURED = 'red\u001b[31m\u0085id';
const FLEET = `
[[node]]
name = "vllm-a"
kind = "vllm"
models = ["safe\\u202Egnp.exe", "red\\u001b[31m\\u0085id"]
`;

/** Anything the page must not render raw: C0, DEL, C1, separators, bidi embeddings, overrides, isolates, marks. */
const INVISIBLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/;

test('model ids with bidi overrides and control characters are shown visibly and isolated', { skip: SKIP }, async () => {
  const { gw, close } = await startFleetAndGateway(FLEET, (sim) => demoGatewayToml(sim.nodes, 0), { logLevel: 'warn' });
  const browser = await launchChromium(CHROMIUM ?? '');
  try {
    const page = await browser.context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    await page.goto(`${gw.url}/admin/`);
    await page.locator('#feed-status[data-state="live"]').waitFor();
    for (const id of [REVERSED, COLOURED]) {
      const cell = page.locator(`#models tr[data-model="${id}"] td.name`);
      await cell.waitFor({ timeout: 20_000 });
      const text = await cell.innerText();
      assert.doesNotMatch(text, INVISIBLE, `the models table shows ${JSON.stringify(text)}`);
      const chip = await page.locator(`#fleet tr[data-node="vllm-a"] li[data-model="${id}"] .model-id`).innerText();
      assert.doesNotMatch(chip, INVISIBLE, `the fleet table shows ${JSON.stringify(chip)}`);
      // (Page code is passed as text: this project's TypeScript has no DOM types.)
      const bdi = JSON.stringify(`#models tr[data-model="${id}"] td.name bdi`);
      const isolation = await page.evaluate<string>(
        `(() => { const b = document.querySelector(${bdi}); return b === null ? 'none' : getComputedStyle(b).unicodeBidi; })()`,
      );
      assert.equal(isolation, 'isolate', 'the id is isolated from the text around it');
    }
    assert.equal(
      await page.locator(`#models tr[data-model="${REVERSED}"] td.name`).innerText(),
      'safe\\u202egnp.exe',
      'the override is shown, not obeyed',
    );
    assert.equal(await page.locator(`#models tr[data-model="${COLOURED}"] td.name`).innerText(), 'red\\x1b[31m\\x85id');
    // The explain form's model list: option text cannot hold an element, and is made visible too.
    const options = await page.locator('#explain-form select[name="model"] option').allInnerTexts();
    for (const option of options) assert.doesNotMatch(option, INVISIBLE, JSON.stringify(option));
    assert.deepEqual(problems, []);
  } finally {
    await browser.close();
    await close();
  }
});
