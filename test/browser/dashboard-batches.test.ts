// Issue 44 ("Seen"): the dashboard's Batches view in real Chromium, against a gateway with a
// state_dir running jobs of two tenants on vLLM sim nodes. Each job is listed with its tenant,
// status and counts (answered of the total, completed, failed, retried, waiting, in flight, rate,
// ETA); a job still running has a cancel button, which asks first and then cancels it through the
// admin's route (POST /admin/batches/{id}/cancel: another tenant's job, the admin holding no tenant
// key) — the job ends `cancelled`, its waiting lines failed `batch_cancelled`. The route takes
// changes only from the gateway's own page. Without a state_dir the view says what to set.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { chromiumPath, launchChromium, PAGE_TIMEOUT_MS, type Browser, skipWithoutChromium } from '#test/fixtures/browser.ts';
import { eventually, httpJson } from '#test/fixtures/http.ts';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startInProcessGateway } from '#test/fixtures/in-process.ts';
import { tenantsToml, vllmNode } from '#test/fixtures/tenant-gateway.ts';
import {
  chatLine,
  fileLines,
  pollUntil,
  startBatchGateway,
  upload,
  type BatchGateway,
} from '#test/integration/batch/batch-fixture.ts';

const CHROMIUM = chromiumPath();
const SKIP = skipWithoutChromium();
const RESULTS = 'test-results';
const QUICK_KEY = 'sk-dashboard-batch-quick-1';
const SLOW_KEY = 'sk-dashboard-batch-slow-2';

let browser: Browser | undefined;
let fleet: BatchGateway | undefined;

before(async () => {
  if (CHROMIUM === undefined) return;
  mkdirSync(RESULTS, { recursive: true });
  fleet = await startBatchGateway({
    // `slow`: 15 s to each first token, so a 40-line job is still running when the page cancels it, and
    // cancelling while its lines in flight finish.
    fleet: [vllmNode('fast', ['m']), vllmNode('slow', ['s'], 'ttft = "15s"\ntokens_per_second = 100')].join('\n'),
    extra: tenantsToml([
      { name: 'quick', keys: [QUICK_KEY] },
      { name: 'slowpoke', keys: [SLOW_KEY] },
    ]),
    options: { logLevel: 'warn' },
  });
  browser = await launchChromium(CHROMIUM);
});

after(async () => {
  await browser?.close();
  await fleet?.close();
  fleet?.removeState();
});

interface ViewRow {
  readonly id: string;
  readonly status: string;
  readonly in_flight: number;
}

test(
  'the Batches view lists each job with its counts, and its cancel button cancels another tenant’s job',
  { skip: SKIP },
  async () => {
    assert.ok(browser && fleet);
    const { gw } = fleet;
    // A finished job of `quick`: four lines answered, one failed (a model no node serves: its 404).
    const quick = fleet.client(QUICK_KEY);
    const lines = [
      ...Array.from({ length: 4 }, (_, i) => chatLine(`q${i}`, 'm', `line ${i}`)),
      chatLine('q4', 'nope', 'no model'),
    ];
    const done = await pollUntil(
      quick,
      (
        await quick.batches.create({
          input_file_id: (await upload(quick, lines)).id,
          endpoint: '/v1/chat/completions',
          completion_window: '24h',
        })
      ).id,
      ['completed', 'failed', 'expired', 'cancelled'],
    );
    assert.equal(done.status, 'completed');
    // A running job of `slowpoke`: 40 lines on the slow node.
    const slow = fleet.client(SLOW_KEY);
    const running = await slow.batches.create({
      input_file_id: (
        await upload(
          slow,
          Array.from({ length: 40 }, (_, i) => chatLine(`s${i}`, 's', `slow ${i}`)),
        )
      ).id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    await eventually(
      async () => {
        const view = (await httpJson('GET', `${gw.url}/admin/batches`)).json<{ batches: ViewRow[] }>();
        return (view.batches.find((b) => b.id === running.id)?.in_flight ?? 0) > 0;
      },
      PAGE_TIMEOUT_MS,
      'the slow job’s first lines in flight',
    );

    const page = await browser.context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    const posted: string[] = [];
    page.on('request', (req) => {
      if (req.method() === 'POST') posted.push(new URL(req.url()).pathname);
    });
    try {
      await page.goto(`${gw.url}/admin/`);
      await page.locator('#feed-status[data-state="live"]').waitFor();
      const row = (id: string) => page.locator(`#batches tr.batch[data-batch="${id}"]`);
      const cell = (id: string, field: string): Promise<string> => row(id).locator(`[data-field="${field}"]`).innerText();
      await row(done.id).waitFor();
      await row(running.id).waitFor();

      // The finished job: its tenant, status and counts; no cancel button.
      assert.equal(await row(done.id).getAttribute('data-status'), 'completed');
      assert.equal(await cell(done.id, 'tenant'), 'quick');
      assert.equal(await cell(done.id, 'status'), 'completed');
      assert.match(await cell(done.id, 'progress'), /5 \/ 5/);
      assert.equal(await cell(done.id, 'completed'), '4');
      assert.equal(await cell(done.id, 'failed'), '1');
      assert.equal(await cell(done.id, 'retried'), '0');
      assert.equal(await cell(done.id, 'waiting'), '0');
      assert.equal(await cell(done.id, 'eta'), '—', 'a finished job has no time left');
      assert.match(await cell(done.id, 'rate'), /^[\d,.]+\/s$/);
      assert.equal(await row(done.id).locator('button.action').count(), 0);

      // The running job: another tenant's, in progress, 40 lines, some in flight; a cancel button.
      assert.equal(await cell(running.id, 'tenant'), 'slowpoke');
      assert.equal(await cell(running.id, 'status'), 'in_progress');
      assert.match(await cell(running.id, 'progress'), /\/ 40$/);
      assert.ok(Number(await cell(running.id, 'in-flight')) > 0);
      assert.ok(Number(await cell(running.id, 'waiting')) > 0);
      await page.screenshot({ path: `${RESULTS}/dashboard-batches.png`, fullPage: true });

      // Cancel asks first (naming the tenant), and sends nothing until confirmed.
      const cancel = row(running.id).locator('button.action[data-action="cancel"]');
      await eventually(async () => !(await cancel.isDisabled()), PAGE_TIMEOUT_MS, 'the cancel button enabled (the page may act)');
      await cancel.click();
      const confirm = row(running.id).locator('.action-confirm');
      assert.match(await confirm.innerText(), new RegExp(`^Cancel ${running.id} \\(tenant slowpoke\\)\\?`));
      assert.deepEqual(posted, []);
      await confirm.locator('button[data-confirm="yes"]').click();
      const outcome = row(running.id).locator('.action-outcome[data-ok="yes"]');
      await outcome.waitFor({ timeout: PAGE_TIMEOUT_MS });
      assert.match(await outcome.innerText(), new RegExp(`${running.id}: cancelling`));
      assert.deepEqual(posted, [`/admin/batches/${running.id}/cancel`]);
      // While its lines in flight finish: cancelling, the button off with why, the outcome beside it.
      await page.locator(`#batches tr.batch[data-batch="${running.id}"][data-status="cancelling"]`).waitFor();
      assert.equal(await cancel.isDisabled(), true);
      assert.equal(await row(running.id).locator('.action-off').innerText(), 'cancelling');
      assert.equal(await outcome.count(), 1);

      // The job ends cancelled (its lines in flight finish); the row follows without a reload.
      await page
        .locator(`#batches tr.batch[data-batch="${running.id}"][data-status="cancelled"]`)
        .waitFor({ timeout: PAGE_TIMEOUT_MS });
      const ended = await pollUntil(slow, running.id, ['cancelled', 'completed', 'failed', 'expired']);
      assert.equal(ended.status, 'cancelled');
      const counts = ended.request_counts!;
      assert.equal(counts.completed + counts.failed, 40);
      assert.ok(counts.failed > 0 && counts.completed < 40, JSON.stringify(counts));
      const errors = await fileLines(slow, ended.error_file_id);
      assert.ok(errors.length > 0 && errors.every((l) => l.error?.code === 'batch_cancelled'));
      await eventually(
        async () => (await cell(running.id, 'failed')) === String(counts.failed),
        PAGE_TIMEOUT_MS,
        'the failed count',
      );
      assert.equal(await row(running.id).locator('button.action').count(), 0, 'no cancel for a cancelled job');
      assert.deepEqual(problems, []);
    } finally {
      await page.close();
    }

    // The admin route: a cancel of a job no longer running is refused with why; an unknown id is 404;
    // a page of another origin may not send it.
    const again = await httpJson('POST', `${gw.url}/admin/batches/${running.id}/cancel`);
    assert.equal(again.status, 409);
    assert.match(again.text, /Cannot cancel a batch with status 'cancelled'/);
    assert.equal((await httpJson('POST', `${gw.url}/admin/batches/batch_nope/cancel`)).status, 404);
    const foreign = await httpJson('POST', `${gw.url}/admin/batches/${running.id}/cancel`, undefined, {
      origin: 'http://evil.example',
      'sec-fetch-site': 'cross-site',
    });
    assert.equal(foreign.status, 403);
  },
);

test('without a state_dir the Batches view says what to set', { skip: SKIP }, async () => {
  assert.ok(browser);
  const bare = await startInProcessGateway(gatewayToml([{ name: 'gpu-1', url: 'http://127.0.0.1:9/', kind: 'vllm' }]), {
    logLevel: 'warn',
  });
  const page = await browser.context.newPage();
  try {
    await page.goto(`${bare.url}/admin/`);
    await page.locator('#feed-status[data-state="live"]').waitFor();
    await page.locator('#batches[data-state="unserved"]').waitFor();
    assert.match(await page.locator('#batches-empty').innerText(), /\[server\] state_dir.*not set/);
    assert.equal(
      (await httpJson('POST', `${bare.url}/admin/batches/batch_x/cancel`)).status,
      404,
      'no batch route without the feature',
    );
  } finally {
    await page.close();
    await bare.close();
  }
});
