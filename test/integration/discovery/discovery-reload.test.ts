// Reload (issue 3): SIGHUP and POST /admin/reload re-read the config file (here `gateway.reload()`,
// what the CLI's SIGHUP handler calls; serve-process.test.ts sends a real SIGHUP). Nodes with unchanged
// name and URL keep their health and discovery state; new nodes start untried; removed nodes stop
// being routed to while their in-flight requests finish; an invalid file is rejected and the old
// config keeps working.
//
// Scheduled discovery is slowed to once an hour, so listing rounds happen only when the test asks:
// a request for an unknown model triggers refresh-on-miss (no cooldown) and waits for that round.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { request } from 'undici';
import { startGateway, startSimFleet, type GatewayUnderTest, type SimFleet } from '#test/fixtures/in-process-fleet.ts';
import { httpJson, setSimFaults } from '#test/fixtures/http.ts';
import {
  chat,
  chatBody,
  gatewayConfig,
  healthOf,
  logMark,
  logsOf,
  modelState,
  nodeDetail,
  servedBy,
  simCount,
  waitForNode,
} from '#test/fixtures/gateway-state.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { logLines } from '#test/fixtures/gateway-waits.ts';

const FLEET = ['k', 'e', 'd', 'n', 'spare']
  .map((name) => `[[node]]\nname = "${name}"\nkind = "vllm"\nmodels = ["m-${name}"]\nttft = "2ms"\ntokens_per_second = 1000\n`)
  .join('\n')
  .concat('\n[[node]]\nname = "g"\nkind = "vllm"\nmodels = ["m-g"]\nttft = "5ms"\ntokens_per_second = 20\n');

const HEALTH_FAIL_THRESHOLD = 3;
const DISCOVERY_FAIL_THRESHOLD = HEALTH_FAIL_THRESHOLD;

let sim: SimFleet;
let gw: GatewayUnderTest;

function configText(nodes: readonly { name: string; url: string }[], discoveryInterval = '1h'): string {
  return gatewayConfig({
    health: { interval: '100ms', timeout: '2s', failThreshold: HEALTH_FAIL_THRESHOLD },
    discovery: { interval: discoveryInterval, timeout: '3s', miss_wait: '5s', miss_cooldown: '0s' },
    nodes: nodes.map((n) => ({ ...n, kind: 'vllm' })),
  });
}

const nodesNamed = (...names: string[]): { name: string; url: string }[] => names.map((name) => ({ name, url: sim.url(name) }));

/** Rewrites the config file, reloads it as SIGHUP does, and waits for the gateway to log the outcome. */
async function reloadWith(
  text: string,
  outcome: 'config reloaded' | 'config reload rejected; keeping the running config',
): Promise<Record<string, unknown>> {
  const mark = logMark(gw);
  await gw.reload(text);
  let line: Record<string, unknown> | undefined;
  await untilEvent(
    () => {
      line = gw
        .logs()
        .slice(mark)
        .find((l) => l.msg === 'config reloaded' || l.msg === 'config reload rejected; keeping the running config');
      return line !== undefined;
    },
    [logLines(gw)],
    'the reload to be logged',
  );
  assert.equal(line?.msg, outcome, JSON.stringify(line));
  return line ?? {};
}

/** One discovery round on every node that does not list "nope" (they are all refreshed on the miss). */
async function discoveryRound(): Promise<void> {
  const res = await chat(gw.url, 'nope');
  // 404 when every listing is current, 503 while one is not: refused either way.
  assert.ok([404, 503].includes(res.status), res.text);
}

before(async () => {
  sim = await startSimFleet(FLEET);
  gw = await startGateway(configText(nodesNamed('k', 'e', 'd', 'g')));
  for (const name of ['k', 'e', 'd', 'g']) {
    await waitForNode(gw, name, (d) => d.models.state === 'known' && d.status === 'healthy', 'known and healthy');
  }
});

after(async () => {
  await gw?.close();
  await sim?.close();
});

test('a reload keeps the learned state of unchanged nodes, starts new ones untried, and drains removed ones', async (t) => {
  t.after(async () => {
    for (const name of ['k', 'e', 'd']) await setSimFaults(sim.url(name), { models: 'none', health: 'none' });
  });
  // Learned state: k has one failed listing, e one empty listing, d failing health checks.
  await setSimFaults(sim.url('k'), { models: 'error500' });
  await setSimFaults(sim.url('e'), { models: 'empty' });
  await setSimFaults(sim.url('d'), { health: 'fail' });
  await waitForNode(gw, 'd', (n) => n.status === 'dead', 'dead');
  await discoveryRound();
  const k = await nodeDetail(gw.url, 'k');
  assert.equal(k?.models.state, 'degraded');
  assert.equal(k?.models.fails, 1);
  assert.match(k?.models.last_error ?? '', /HTTP 500/);
  assert.equal((await nodeDetail(gw.url, 'e'))?.models.state, 'known', 'one empty list is not enough');

  // A long answer from g is in flight when g is removed.
  const stream = await request(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(chatBody('m-g', { stream: true, max_tokens: 30 })),
    signal: AbortSignal.timeout(15_000),
  });
  assert.equal(stream.headers['x-switchyard-node'], 'g');
  const chunks = stream.body[Symbol.asyncIterator]();
  const first = await chunks.next();
  assert.ok(first.done !== true);
  let streamed = String(first.value);

  const mark = logMark(gw);
  await reloadWith(configText(nodesNamed('k', 'e', 'd', 'n')), 'config reloaded');

  const report = await healthOf(gw.url);
  assert.deepEqual(report.details.map((n) => n.name).sort(), ['d', 'e', 'k', 'n']);
  const keptK = report.details.find((n) => n.name === 'k');
  assert.equal(keptK?.models.state, 'degraded');
  assert.equal(keptK?.models.fails, 1, 'discovery fails carried over');
  assert.equal(keptK?.models.last_error, k?.models.last_error, 'last error carried over');
  assert.deepEqual(keptK?.models.names, ['m-k'], 'last-known-good names carried over');
  const keptD = report.details.find((n) => n.name === 'd');
  assert.equal(keptD?.status, 'dead', 'health carried over');
  assert.ok((keptD?.fails ?? 0) >= HEALTH_FAIL_THRESHOLD, 'health fails carried over');
  assert.ok(
    ['untried', 'known'].includes(report.details.find((n) => n.name === 'n')?.models.state ?? ''),
    'new node starts untried',
  );
  assert.equal(logsOf(gw, 'g', 'node removed', mark).length, 1);
  assert.equal(logsOf(gw, 'n', 'node added', mark).length, 1);
  assert.equal(logsOf(gw, 'k', 'node added', mark).length + logsOf(gw, 'k', 'node removed', mark).length, 0);

  // The removed node's in-flight answer finishes in full; new requests no longer go there.
  for await (const chunk of { [Symbol.asyncIterator]: () => chunks }) streamed += String(chunk);
  assert.match(streamed, /data: \[DONE\]/);
  const gChats = await simCount(sim.url('g'), '/v1/chat/completions');
  // No node lists m-g any more, so this request is also the next discovery round (refresh-on-miss).
  assert.ok([404, 503].includes((await chat(gw.url, 'm-g')).status));
  assert.equal(await simCount(sim.url('g'), '/v1/chat/completions'), gChats, 'g gets no new request');

  // The carried counters went on counting: that round made e known_empty (1 + 1 empty lists)
  // and k fail twice; a third failure expires k.
  assert.equal((await nodeDetail(gw.url, 'e'))?.models.state, 'known_empty', 'empties carried over');
  assert.equal((await nodeDetail(gw.url, 'k'))?.models.fails, 2);
  await discoveryRound();
  const expired = await nodeDetail(gw.url, 'k');
  assert.equal(expired?.models.state, 'expired');
  assert.equal(expired?.models.fails, DISCOVERY_FAIL_THRESHOLD);

  // The new node was listed at once (not after the hour-long interval) and takes its model.
  await waitForNode(gw, 'n', modelState('known'), 'known');
  assert.equal(servedBy(await chat(gw.url, 'm-n')), 'n');
  assert.equal(logsOf(gw, 'n', 'models discovered', mark).length, 1);

  for (const name of ['k', 'e', 'd']) await setSimFaults(sim.url(name), { models: 'none', health: 'none' });
  await discoveryRound();
  for (const name of ['k', 'e', 'd']) {
    await waitForNode(gw, name, (d) => d.models.state === 'known' && d.status === 'healthy', 'back to known and healthy');
  }
});

test('POST /admin/reload applies a new file; a node whose URL changed starts fresh', async (t) => {
  t.after(() => setSimFaults(sim.url('e'), { models: 'none' }));
  await setSimFaults(sim.url('e'), { models: 'error500' });
  await discoveryRound();
  assert.equal((await nodeDetail(gw.url, 'e'))?.models.fails, 1);
  await setSimFaults(sim.url('e'), { models: 'none' });

  // "e" now points at the spare node.
  await writeFile(gw.configPath, configText([...nodesNamed('k', 'd', 'n'), { name: 'e', url: sim.url('spare') }]));
  const res = await httpJson('POST', `${gw.url}/admin/reload`);
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(res.json(), { status: 'reloaded' });

  const fresh = await nodeDetail(gw.url, 'e');
  assert.equal(fresh?.url, sim.url('spare'));
  assert.equal(fresh?.models.fails, 0);
  assert.equal(fresh?.models.last_error, null);
  const listed = await waitForNode(gw, 'e', modelState('known'), 'known at its new URL');
  assert.deepEqual(listed.models.names, ['m-spare']);
  assert.equal(servedBy(await chat(gw.url, 'm-spare')), 'e');
  assert.ok([404, 503].includes((await chat(gw.url, 'm-e')).status), "the old URL's models are gone");
});

test('an invalid config is rejected with its problems logged and returned, and the running one keeps working', async () => {
  const before_ = await healthOf(gw.url);
  const invalid = `${configText(nodesNamed('k'))}\n[[nodes]]\nname = "broken"\nurl = "not a url"\nkind = "vllm"\nsurprise = 1\n`;

  const rejected = await reloadWith(invalid, 'config reload rejected; keeping the running config');
  const problems: readonly unknown[] = Array.isArray(rejected.problems) ? (rejected.problems as unknown[]) : [];
  assert.ok(
    problems.some((p) => typeof p === 'string' && p.startsWith('nodes[1].url')),
    JSON.stringify(problems),
  );

  const res = await httpJson('POST', `${gw.url}/admin/reload`);
  assert.equal(res.status, 400);
  const body = res.json<{ status: string; problems: string[] }>();
  assert.equal(body.status, 'rejected');
  assert.ok(
    body.problems.some((p) => p.startsWith('nodes[1].url')),
    JSON.stringify(body),
  );

  const after_ = await healthOf(gw.url);
  assert.deepEqual(
    after_.details.map((n) => [n.name, n.url]),
    before_.details.map((n) => [n.name, n.url]),
  );
  assert.equal(servedBy(await chat(gw.url, 'm-n')), 'n', 'the removed-in-the-invalid-file node still serves');
  assert.equal(servedBy(await chat(gw.url, 'm-spare')), 'e');
});

test('a reload that shortens discovery.interval takes effect without waiting out the old interval', async () => {
  await writeFile(gw.configPath, configText([...nodesNamed('k', 'd', 'n'), { name: 'e', url: sim.url('spare') }], '100ms'));
  const res = await httpJson('POST', `${gw.url}/admin/reload`);
  assert.equal(res.status, 200, res.text);
  // Four listings come within about 400 ms at the new interval; the old one would take 4 hours.
  // The bound is generous so that a busy machine cannot fail it.
  const before_ = await simCount(sim.url('n'), '/v1/models');
  await untilEvent(
    async () => (await simCount(sim.url('n'), '/v1/models')) - before_ >= 4,
    [sim.activity('n')],
    'four listings at the new 100 ms interval',
  );
  // Every node's listing is current and none lists m-g: unknown, not unavailable.
  assert.equal((await chat(gw.url, 'm-g')).status, 404);
});
