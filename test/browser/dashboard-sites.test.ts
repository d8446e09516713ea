// Federation in the operator dashboard, in real Chromium: two in-process sites gossiping on an
// in-memory bus (heartbeat 500 ms, freshness 10 s: wide enough that no busy machine makes b stale
// before the test stops it, so every "fresh" below is a state, not a moment). Site a's page shows site b fresh with its
// revision and models, a model only b serves with b as its site, a forward that cannot reach b as
// b backing off, a forged record for b as a rejection, the Events view filtered by site — and b
// stale, on the page without a reload, once b stops.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { MemoryBus, type MemoryTransport } from '#src/mesh/index.ts';
import { modelsDigest, signRecord } from '#src/mesh/record-codec.ts';
import type { SiteKey } from '#src/mesh/site-key.ts';
import { newSiteKey } from '#src/mesh/site-key-file.ts';
import { chromiumPath, launchChromium, type Browser, skipWithoutChromium } from '#test/fixtures/browser.ts';
import { DEFAULT_SITE_BACKOFF } from '#src/routing/index.ts';
import { gatewayToml, meshToml } from '#test/fixtures/gateway-configs.ts';
import { startFleetAndGateway, type FleetAndGateway } from '#test/fixtures/in-process-fleet.ts';

const CHROMIUM = chromiumPath();
const SKIP = skipWithoutChromium();
const RESULTS = 'test-results';
const IDS = ['a', 'b'] as const;
type Id = (typeof IDS)[number];

const bus = new MemoryBus();
const keys = new Map<Id, SiteKey>(IDS.map((id) => [id, newSiteKey()]));
const key = (id: Id): SiteKey => keys.get(id) ?? assert.fail();
/** The forger of these tests, let in by both sites (as a relay would be) so that its messages are judged. */
const ROGUE = newSiteKey();

function fleet(id: Id): string {
  const models = id === 'a' ? '["m-a", "shared"]' : '["only-b", "shared"]';
  return `[[node]]\nname = "${id}-gpu"\nkind = "vllm"\nmodels = ${models}\ncontext = ${id === 'a' ? 8_192 : 32_768}\nttft = "2ms"\n`;
}

function siteMesh(id: Id): string {
  // url: nothing listens there: a forward to b fails to connect, so b backs off.
  return meshToml(
    id,
    IDS.map((pin) => ({ id: pin, publicKey: key(pin).publicKey })),
    { more: ['heartbeat = "500ms"', 'freshness = "10s"', `allowed_peers = ["${ROGUE.peerId}"]`] },
  );
}

function startSite(id: Id): Promise<FleetAndGateway> {
  return startFleetAndGateway(
    fleet(id),
    (sim) => gatewayToml([{ name: `${id}-gpu`, url: sim.url(`${id}-gpu`), kind: 'vllm' }], siteMesh(id)),
    {
      logLevel: 'warn',
      meshGossip: { key: key(id), transport: (own) => bus.transport(`peer-${id}`, own.peerId), replaySinceMs: 0 },
    },
  );
}

let browser: Browser | undefined;
let siteA: FleetAndGateway | undefined;
let siteB: FleetAndGateway | undefined;
let rogue: MemoryTransport | undefined;

before(async () => {
  if (CHROMIUM === undefined) return;
  mkdirSync(RESULTS, { recursive: true });
  siteA = await startSite('a');
  siteB = await startSite('b');
  rogue = bus.transport('peer-rogue', ROGUE.peerId);
  await rogue.start();
  browser = await launchChromium(CHROMIUM);
});

after(async () => {
  await browser?.close();
  await rogue?.stop();
  await siteB?.close();
  await siteA?.close();
});

test(
  'the Sites, Models and Events views show the mesh live: fresh, remote-only models, back-off, rejections, then stale',
  { skip: SKIP },
  async () => {
    assert.ok(browser && siteA && siteB && rogue);
    const gw = siteA.gw;
    const page = await browser.context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    await page.goto(`${gw.url}/admin/`);
    await page.locator('#feed-status[data-state="live"]').waitFor();

    // Sites: b fresh, with a revision, its record's age, two models and its load; this site's own set.
    const b = page.locator('#sites tr[data-site="b"]');
    await page.locator('#sites tr[data-site="b"][data-state="fresh"]').waitFor();
    await page.locator('#own-site[data-site="a"]').waitFor();
    assert.match(
      await page.locator('#own-site').innerText(),
      /This site: a .*revision \d+.*publishes 2 models: m-a \(ctx 8192\), shared \(ctx 8192\)/s,
    );
    const cells = await b.locator('td').allInnerTexts();
    assert.equal(cells[0], 'b');
    assert.match(cells[1] ?? '', /fresh/, 'state as a word, not colour alone');
    assert.match(cells[2] ?? '', /^\d+$/, 'revision');
    assert.match(cells[3] ?? '', /^\d+s ago$/, 'age of the last record');
    assert.equal(cells[4], '2', 'models count');
    assert.match(cells[5] ?? '', /0 in flight · 0 queued · \d+ slots/);
    assert.equal(await b.getAttribute('data-reachable'), 'yes');
    assert.equal(await page.locator('#sites tr[data-site="a"]').count(), 0, 'this site is not a remote row');

    // Models: a model only b serves has a row with b (fresh, its ctx); a shared one lists a's node and b.
    const onlyB = page.locator('#models tr[data-model="only-b"]');
    await onlyB.locator('li[data-site="b"][data-state="fresh"]').waitFor();
    assert.equal(await onlyB.getAttribute('data-local'), 'no');
    assert.match(await onlyB.innerText(), /b · ctx 32768/);
    const shared = page.locator('#models tr[data-model="shared"]');
    await shared.locator('li[data-site="b"][data-state="fresh"]').waitFor();
    assert.match(await shared.innerText(), /a-gpu/);
    assert.equal(await page.locator('#models tr[data-model="m-a"] li[data-site]').count(), 0);
    await page.locator('#events li[data-site="b"][data-kind="freshness"]').first().waitFor();
    assert.match(
      await page.locator('#events li[data-site="b"][data-kind="freshness"]').first().innerText(),
      /site b stale → fresh/,
    );

    // A forward to b cannot connect: b backs off, on the Sites view and in the Events view.
    /** Asks a for a model only b serves; returns when the request was sent (monotonic ms). */
    const forwardToB = async (): Promise<number> => {
      const sentAt = performance.now();
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'only-b', max_tokens: 4, messages: [{ role: 'user', content: 'hi' }] }),
      });
      await res.text();
      assert.ok(res.status >= 500, `a forward nothing answers fails (${res.status})`);
      return sentAt;
    };
    let sentAt = await forwardToB();
    await page.locator('#sites tr[data-site="b"][data-reachable="no"]').waitFor();
    assert.match(await b.innerText(), /unreachable \d+s ago: /);
    await page.locator('#events li[data-site="b"][data-kind="reachability"]').waitFor();
    // Explain lists the remote sites' verdicts next to the nodes': b is skipped while it backs off.
    // b's first back-off is 2 s, and a busy machine can take longer than that from the failed
    // forward to explain's answer. Only then may explain say "eligible" (the back-off ran out): the
    // forward is sent again (it fails again, and b's back-off doubles) and explain asked again. An
    // "eligible" sooner than the back-off after the failing forward was sent is a failure.
    await page.locator('#explain-form select[name="model"]').selectOption('only-b');
    for (let backoffMs = DEFAULT_SITE_BACKOFF.initialMs; ; backoffMs = Math.min(DEFAULT_SITE_BACKOFF.maxMs, 2 * backoffMs)) {
      const [answer] = await Promise.all([
        page.waitForResponse((r) => new URL(r.url()).pathname === '/admin/explain'),
        page.locator('#explain-form button').click(),
      ]);
      const answeredAt = performance.now();
      const verdict = ((await answer.json()) as { sites?: { site: string; verdict: string }[] }).sites?.find(
        (s) => s.site === 'b',
      )?.verdict;
      if (verdict === 'excluded') {
        process.stdout.write(
          `# explain said b backs off ${Math.round(answeredAt - sentAt)} ms after the failing forward was sent (back-off ${backoffMs} ms)\n`,
        );
        break;
      }
      assert.ok(
        answeredAt - sentAt >= backoffMs && backoffMs < DEFAULT_SITE_BACKOFF.maxMs,
        `explain said b is ${verdict} ${Math.round(answeredAt - sentAt)} ms after the forward that failed was sent (back-off ${backoffMs} ms)`,
      );
      sentAt = await forwardToB();
    }
    const explained = page.locator('#explain-sites tr[data-site="b"][data-verdict="excluded"]');
    await explained.waitFor();
    assert.match(await explained.innerText(), /unreachable/);

    // A record for b signed with a's key: rejected, once, as the last rejection of b and an event.
    const now = Date.now();
    const forged = {
      v: 1 as const,
      site: 'b',
      url: 'http://127.0.0.1:1/evil',
      revision: now * 1024 + 1_000_000_000,
      issued_at: now,
      models: [{ id: 'evil' }],
      load: { in_flight: 0, queued: 0, slots: 1 },
    };
    for (let i = 0; i < 3; i++) await rogue.publish(signRecord({ ...forged, revision: forged.revision + i }, key('a')));
    await page.locator('#events li[data-site="b"][data-kind="rejection"]').waitFor();
    // (Only the rogue's: a heartbeat naming a digest a has not seen yet would be a rejection of its own.)
    const fromRogue = page.locator('#events li[data-kind="rejection"]', { hasText: ROGUE.peerId });
    assert.equal(await fromRogue.count(), 1, 'once per (peer, reason), as logged');
    assert.match(await fromRogue.innerText(), new RegExp(`site b record from peer ${ROGUE.peerId} rejected: bad_signature`));
    await b.getByText('bad_signature').waitFor();
    assert.match(await b.innerText(), new RegExp(`from ${ROGUE.peerId}`));
    assert.equal(await page.locator('#models tr[data-model="evil"]').count(), 0, 'a rejected record changes nothing');
    const red = 'rgb(153, 27, 27)';
    const colourOf = (kind: string): Promise<string> =>
      page.evaluate<string>(
        `getComputedStyle(document.querySelector('#sites tr[data-site="b"] [data-rejection="${kind}"]')).color`,
      );
    assert.equal(await colourOf('trust'), red, 'a trust failure is an alarm');
    assert.match(await b.locator('[data-rejection="trust"]').innerText(), /trust failure: bad_signature/);

    // b's heartbeat naming a model list a does not hold (the start-up race): an ordering rejection,
    // shown muted beside the trust failure, which it does not hide.
    const race = {
      v: 1 as const,
      site: 'b',
      url: 'http://127.0.0.1:1/b',
      revision: forged.revision + 10,
      issued_at: Date.now(),
      models_digest: modelsDigest([{ id: 'not-yet-held' }]),
      load: { in_flight: 0, queued: 0, slots: 1 },
    };
    await rogue.publish(signRecord(race, key('b')));
    const ordering = b.locator('[data-rejection="ordering"]', { hasText: ROGUE.peerId });
    await ordering.waitFor();
    assert.match(await ordering.innerText(), /ordering, harmless: unknown_digest/);
    assert.notEqual(await colourOf('ordering'), red, 'an ordering rejection is not coloured as an alarm');
    assert.equal(await colourOf('trust'), red);

    // The Events view filtered by site b shows b's entries only; by a node, that node's only.
    await page.locator('#events-filter').selectOption('site:b');
    const kinds = await page.locator('#events li').evaluateAll((items) => items.map((li) => li.getAttribute('data-site')));
    assert.ok(kinds.length >= 3 && kinds.every((site) => site === 'b'), `filtered by site: ${kinds.join(',')}`);
    await page.locator('#events-filter').selectOption('node:a-gpu');
    assert.equal(await page.locator('#events li[data-site]').count(), 0);
    await page.locator('#events-filter').selectOption('');
    await page.screenshot({ path: `${RESULTS}/dashboard-sites.png`, fullPage: true });

    // b stops: stale on the page (no reload), its models shown as stale, not as serving.
    await page.evaluate(`window.dashboardTestMarker = 'same page'`);
    await siteB.close();
    siteB = undefined;
    await page.locator('#sites tr[data-site="b"][data-state="stale"]').waitFor();
    assert.match(await b.innerText(), /stale/);
    await onlyB.locator('li[data-site="b"][data-state="stale"]').waitFor();
    assert.match(await onlyB.innerText(), /b stale, not serving/);
    assert.equal(await onlyB.locator('li[data-state="fresh"]').count(), 0);
    assert.match(
      await page.locator('#events li[data-site="b"][data-kind="freshness"]').first().innerText(),
      /site b fresh → stale/,
    );
    assert.equal(await page.evaluate('window.dashboardTestMarker'), 'same page');
    await page.screenshot({ path: `${RESULTS}/dashboard-sites-stale.png`, fullPage: true });
    assert.deepEqual(problems, []);
    await page.close();
  },
);
