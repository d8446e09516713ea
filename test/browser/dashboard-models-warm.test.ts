// The dashboard's load button in real Chromium against a router whose slots hold a pinned and a
// warm model (issue 38, item 13): a load the reconciler would undo answers 409 and the gateway's
// reason shows in words beside the button (issue 43: after the question a load on a full node asks); a load made with "evict_warm" shows in the Models view as
// held by the operator, with its end.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chromiumPath, launchChromium, PAGE_TIMEOUT_MS, type Browser, skipWithoutChromium } from '#test/fixtures/browser.ts';
import { eventually, httpJson } from '#test/fixtures/http.ts';
import type { FleetAndGateway } from '#test/fixtures/in-process-fleet.ts';
import { startPinnedWarmRouter } from '#test/fixtures/pinned-warm-router.ts';

const CHROMIUM = chromiumPath();
const SKIP = skipWithoutChromium();

let browser: Browser | undefined;
let rig: FleetAndGateway | undefined;

before(async () => {
  if (CHROMIUM === undefined) return;
  rig = await startPinnedWarmRouter({ unloaded: ['extra', 'other'], logLevel: 'warn' });
  browser = await launchChromium(CHROMIUM);
});

after(async () => {
  await browser?.close();
  await rig?.close();
});

test('the load button shows why a load is refused, and the Models view shows an operator hold', { skip: SKIP }, async () => {
  assert.ok(browser && rig);
  const page = await browser.context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(error.message));
  await page.goto(`${rig.gw.url}/admin/`);
  const load = page.locator('#models td.model-actions[data-model="extra"] button[data-action="load"]');
  await load.waitFor({ timeout: PAGE_TIMEOUT_MS });
  await eventually(async () => await load.isEnabled(), PAGE_TIMEOUT_MS, 'the load button enabled');
  await load.click();
  // The router is full (keep and hot): the load asks first, as it unloads an idle model to make room.
  const cell = page.locator('#models td.model-actions[data-model="extra"]');
  assert.match(await cell.locator('.action-confirm').innerText(), /Load 'extra' on router\? It runs 2 of 2 models/);
  await cell.locator('.action-confirm button[data-confirm="yes"]').click();
  await eventually(
    async () =>
      /^✕ refused: load extra on router — loading 'extra' on node 'router', unloading warm 'hot' would not stand: .*pinned 'keep'.*"evict_warm": true.*\(409\) \d\d:\d\d:\d\d$/s.test(
        await cell.locator('.action-outcome').innerText(),
      ),
    PAGE_TIMEOUT_MS,
    'the refusal in words',
  );

  const held = await httpJson('POST', `${rig.gw.url}/admin/models/load`, { model: 'extra', node: 'router', evict_warm: true });
  assert.equal(held.status, 200, held.text);
  await eventually(
    async () =>
      /held on router by the operator until \d{4}-\d\d-\d\dT/.test(
        await page.locator('#models tr[data-model="extra"] td.desired').innerText(),
      ),
    PAGE_TIMEOUT_MS,
    'the hold shown (the feed sends the management view when it changes)',
  );
  assert.deepEqual(problems, []);
  await page.close();
});
