// Per-node model awareness (issue 3) over the real wire: a `switchyard sim` fleet behind a
// `switchyard serve` gateway. Sim faults drive each rule; /health, /metrics, 503 bodies and the
// JSON log lines are what the tests read. Tests run in order and each puts its node back.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, startSimFleet, type GatewayUnderTest, type SimFleet } from '#test/fixtures/in-process-fleet.ts';
import { setSimFaults } from '#test/fixtures/http.ts';
import {
  chat,
  discoveries,
  discoveryLogCounts,
  gatewayConfig,
  logMark,
  metric,
  metricsText,
  metricValue,
  modelState,
  nodeDetail,
  noNodeBody,
  servedBy,
  simCount,
  waitForNode,
} from '#test/fixtures/gateway-state.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { listings } from '#test/fixtures/gateway-waits.ts';

const BULK = ['bulk-0', 'bulk-1', 'bulk-2', 'bulk-3', 'bulk-4', 'bulk-5'];

// vLLM cards are ~475 bytes each: "big" (six models) is over the 2 KiB max_body_bytes, the rest under.
const FLEET = `
[[node]]
name = "alpha"
kind = "vllm"
models = ["m-alpha", "m-shared"]
ttft = "2ms"
tokens_per_second = 1000

[[node]]
name = "beta"
kind = "vllm"
models = ["m-beta", "m-shared"]
ttft = "2ms"
tokens_per_second = 1000

[[node]]
name = "empt"
kind = "vllm"
models = ["m-empt"]
ttft = "2ms"
tokens_per_second = 1000

[[node]]
name = "parse"
kind = "vllm"
models = ["m-parse"]
ttft = "2ms"
tokens_per_second = 1000

[[node]]
name = "down"
kind = "vllm"
models = ["m-down"]
ttft = "2ms"
tokens_per_second = 1000

[[node]]
name = "big"
kind = "vllm"
models = [${BULK.map((m) => `"${m}"`).join(', ')}]
`;

/** Ungrouped nodes that list their models normally. */
const LISTING = ['alpha', 'beta', 'empt', 'parse', 'down'];
/** fail_threshold: health dead after 4 failed probes; a model listing expires after 4 failed fetches. */
const FAIL_THRESHOLD = 4;

let sim: SimFleet;
let gw: GatewayUnderTest;

before(async () => {
  sim = await startSimFleet(FLEET);
  const config = gatewayConfig({
    health: { interval: '100ms', timeout: '2s', failThreshold: FAIL_THRESHOLD },
    discovery: { interval: '150ms', timeout: '3s', max_body_bytes: '2KiB' },
    nodes: sim.nodes.map((n) => ({ name: n.name, url: n.url, kind: 'vllm', group: n.name === 'big' ? 'bulk' : undefined })),
    extra: ['[[models.available]]', 'name = "m-ghost"', '[[models.available]]', 'name = "bulk-0"', 'group = "bulk"'].join('\n'),
  });
  gw = await startGateway(config);
  for (const name of LISTING)
    await waitForNode(gw, name, (d) => d.models.state === 'known' && d.status === 'healthy', 'known and healthy');
  await waitForNode(gw, 'big', modelState('expired'), 'expired (its list is too large)');
});

after(async () => {
  await gw?.close();
  await sim?.close();
});

/** Clears every fault on the named sim nodes and waits until the gateway sees them known and healthy again. */
async function restore(...names: string[]): Promise<void> {
  for (const name of names) await setSimFaults(sim.url(name), { models: 'none', health: 'none' });
  for (const name of names) {
    await waitForNode(gw, name, (d) => d.models.state === 'known' && d.status === 'healthy', 'known and healthy again');
  }
}

const exclusions = (model: string, reason: string): Promise<number> =>
  metric(gw.url, 'gateway_model_filter_exclusions_total', { model, reason });

test('each model is routed only to the nodes that list it, and every other node is counted with its reason', async () => {
  const missingBefore = await exclusions('m-alpha', 'missing');
  const groupBefore = await exclusions('m-alpha', 'group_mismatch');
  const res = await chat(gw.url, 'm-alpha');
  assert.equal(res.status, 200, res.text);
  assert.equal(servedBy(res), 'alpha');
  // One request: beta, empt, parse and down do not list m-alpha; big is in another group.
  assert.equal((await exclusions('m-alpha', 'missing')) - missingBefore, 4);
  assert.equal((await exclusions('m-alpha', 'group_mismatch')) - groupBefore, 1);

  for (let i = 0; i < 3; i++) assert.equal(servedBy(await chat(gw.url, 'm-beta')), 'beta');
  const shared = new Set<string | undefined>();
  for (let i = 0; i < 6; i++) shared.add(servedBy(await chat(gw.url, 'm-shared')));
  assert.deepEqual([...shared].sort(), ['alpha', 'beta']);
});

test('each node logs "models discovered" once at start, then nothing while its list stays the same', async () => {
  const mark = logMark(gw);
  const rounds = await discoveries(gw.url, 'alpha', 'ok');
  await untilEvent(async () => (await discoveries(gw.url, 'alpha', 'ok')) >= rounds + 4, [listings(gw)], 'four more rounds');
  for (const name of LISTING) {
    // m-ghost is declared without a group, so every ungrouped node should serve it: one warning each.
    assert.deepEqual(discoveryLogCounts(gw, name), { 'models discovered': 1, 'configured model not served by node': 1 }, name);
    assert.deepEqual(discoveryLogCounts(gw, name, mark), {}, `${name}: nothing new while unchanged`);
  }
  const warning = gw.logs().find((l) => l.node === 'alpha' && l.msg === 'configured model not served by node');
  assert.equal(warning?.model, 'm-ghost');
  const discovered = gw.logs().find((l) => l.node === 'alpha' && l.msg === 'models discovered');
  assert.deepEqual(discovered?.added, ['m-alpha', 'm-shared']);
});

test('a model list over max_body_bytes is a parse failure that expires the node, never an empty list', async () => {
  const big = await nodeDetail(gw.url, 'big');
  assert.equal(big?.models.state, 'expired');
  assert.deepEqual(big?.models.names, []);
  assert.match(big?.models.last_error ?? '', /exceeds the limit of 2048 bytes/);
  assert.equal(big?.status, 'healthy', 'its health checks are unaffected');
  const text = await metricsText(gw.url);
  assert.ok(metricValue(text, 'gateway_model_discovery_total', { node: 'big', result: 'parse_error' }) >= FAIL_THRESHOLD);
  assert.equal(metricValue(text, 'gateway_model_discovery_total', { node: 'big', result: 'empty' }), 0);
  assert.equal(metricValue(text, 'gateway_model_discovery_total', { node: 'big', result: 'ok' }), 0);
  assert.match(text, /gateway_node_models_ok\{node="big"\} 0/);
  assert.deepEqual(discoveryLogCounts(gw, 'big'), { 'model discovery failed': 1, 'model discovery expired': 1 });

  // Its listing never parsed and has expired: the doubt it left is over (issue 38 item 10), so a
  // name no node ever listed is unknown, not a 503 to retry.
  const res = await chat(gw.url, 'bulk-0');
  assert.equal(res.status, 404, res.text);
  assert.equal(res.json<{ error: { code: string } }>().error.code, 'model_not_found');
});

test('a model nobody can serve now gets 503 with Retry-After and one reason per node: missing, empty, expired, dead; a name no node ever listed is 404', async () => {
  await setSimFaults(sim.url('empt'), { models: 'empty' });
  await setSimFaults(sim.url('parse'), { models: 'error500' });
  await setSimFaults(sim.url('down'), { health: 'fail' });
  try {
    await waitForNode(gw, 'empt', modelState('known_empty'), 'known_empty');
    await waitForNode(gw, 'parse', modelState('expired'), 'expired');
    await waitForNode(gw, 'down', (d) => d.status === 'dead', 'dead');

    // m-down is listed only by the dead node: known, unavailable now.
    const before = await metricsText(gw.url);
    const res = await chat(gw.url, 'm-down');
    const after_ = await metricsText(gw.url);
    assert.equal(res.status, 503, res.text);
    assert.ok(Number(res.headers['retry-after']) >= 1, 'Retry-After is set');
    const body = noNodeBody(res);
    assert.match(body.message, /no healthy node available/);
    const expected = { group_mismatch: 1, dead: 1, missing: 2, empty: 1, expired: 1 };
    assert.deepEqual(body.exclusions, expected);
    for (const [reason, count] of Object.entries(expected)) {
      const labels = { model: 'm-down', reason };
      const delta =
        metricValue(after_, 'gateway_model_filter_exclusions_total', labels) -
        metricValue(before, 'gateway_model_filter_exclusions_total', labels);
      assert.equal(delta, count, `exclusions metric for ${reason}`);
    }

    // The expired node's last-known names are not routed to, but they are known: 503, not 404.
    assert.deepEqual(noNodeBody(await chat(gw.url, 'm-parse')).exclusions, {
      group_mismatch: 1,
      dead: 1,
      missing: 2,
      empty: 1,
      expired: 1,
    });
    // A name no node's last listing has is unknown, whatever is dead or expired (issue 38 item 10).
    const unknown = await chat(gw.url, 'no-such-model');
    assert.equal(unknown.status, 404, unknown.text);
    assert.equal(unknown.headers['retry-after'], undefined);
    assert.ok((await exclusions('m-parse', 'expired')) >= 1);

    const text = await metricsText(gw.url);
    assert.match(text, /gateway_node_models_ok\{node="empt"\} 1/, 'known_empty is a known listing');
    assert.match(text, /gateway_node_models_ok\{node="parse"\} 0/);
    assert.match(text, /gateway_node_models_ok\{node="down"\} 1/, 'health does not change the listing');
    assert.ok(metricValue(text, 'gateway_model_discovery_total', { node: 'parse', result: 'error' }) >= FAIL_THRESHOLD);
    // A dead node's discovery keeps running on its own cadence.
    const downOk = metricValue(text, 'gateway_model_discovery_total', { node: 'down', result: 'ok' });
    await untilEvent(async () => (await discoveries(gw.url, 'down', 'ok')) >= downOk + 2, [listings(gw)], 'down still listed');
  } finally {
    await restore('empt', 'parse', 'down');
  }
  assert.equal(servedBy(await chat(gw.url, 'm-parse')), 'parse');
  assert.equal(servedBy(await chat(gw.url, 'm-down')), 'down');
});

test('two empty lists in a row are needed before a node counts as serving nothing, logged once', async () => {
  // Its own gateway, listing every 2 s: the state after exactly one empty list lasts one interval,
  // which must outlast the observation (four HTTP reads) on a busy machine; 150 ms did not. big's
  // list is over max_body_bytes (expired, never listed: no doubt left), so once empt lists nothing,
  // m-empt is in no node's last listing: 404.
  const gw = await startGateway(
    gatewayConfig({
      health: { interval: '100ms', timeout: '2s', failThreshold: FAIL_THRESHOLD },
      discovery: { interval: '2s', timeout: '3s', max_body_bytes: '2KiB' },
      nodes: [
        { name: 'empt', url: sim.url('empt'), kind: 'vllm' },
        { name: 'big', url: sim.url('big'), kind: 'vllm' },
      ],
      extra: ['[[models.available]]', 'name = "m-ghost"'].join('\n'),
    }),
  );
  try {
    const restoreHere = async (): Promise<void> => {
      await setSimFaults(sim.url('empt'), { models: 'none', health: 'none' });
      await waitForNode(gw, 'empt', (d) => d.models.state === 'known' && d.status === 'healthy', 'known and healthy again');
    };
    await restoreHere();
    await waitForNode(gw, 'big', modelState('expired'), 'expired (its list is too large)');
    let mark = logMark(gw);
    const emptyMetric = (): Promise<number> => discoveries(gw.url, 'empt', 'empty');
    // Observe the state while exactly one empty list has been seen: the metric is read before and
    // after /health and a routed request, and only an observation with both readings at base + 1 counts.
    let observed = false;
    for (let attempt = 0; attempt < 3 && !observed; attempt++) {
      mark = logMark(gw);
      const base = await emptyMetric();
      await setSimFaults(sim.url('empt'), { models: 'empty' });
      await untilEvent(
        async () => {
          const first = await emptyMetric();
          if (first > base + 1) return true; // missed the window; try again
          if (first < base + 1) return false;
          const detail = await nodeDetail(gw.url, 'empt');
          const res = await chat(gw.url, 'm-empt');
          if ((await emptyMetric()) !== base + 1) return false;
          assert.equal(detail?.models.state, 'known', 'one empty list changes nothing');
          assert.deepEqual(detail?.models.names, ['m-empt']);
          assert.equal(servedBy(res), 'empt', 'still routed on the names it listed before');
          observed = true;
          return true;
        },
        [listings(gw)],
        'exactly one empty list',
      );
      if (observed) break;
      await restoreHere();
    }
    assert.ok(observed, 'saw the node after exactly one empty list');

    const detail = await waitForNode(gw, 'empt', modelState('known_empty'), 'known_empty');
    assert.deepEqual(detail.models.names, []);
    assert.equal(detail.models.fails, 0, 'an empty list is a success');
    const res = await chat(gw.url, 'm-empt');
    assert.equal(res.status, 404, res.text);
    // More empty lists change nothing and log nothing more.
    const empties = await emptyMetric();
    await untilEvent(async () => (await emptyMetric()) >= empties + 3, [listings(gw)], 'three more empty lists');
    assert.deepEqual(discoveryLogCounts(gw, 'empt', mark), { 'node reports no models': 1 });

    await restoreHere();
    assert.equal(servedBy(await chat(gw.url, 'm-empt')), 'empt');
    assert.deepEqual(discoveryLogCounts(gw, 'empt', mark), {
      'node reports no models': 1,
      'models discovered': 1,
      'configured model not served by node': 1,
    });
  } finally {
    await gw.close();
  }
});

test('an unparseable list keeps the last-known-good names, expires after fail_threshold, recovers on the next good list', async () => {
  const cases = [
    { fault: 'no_data', error: /has no 'data' field/ },
    { fault: 'error_body', error: /has no 'data' field \(node error: boom\)/ },
    { fault: 'garbage', error: /not valid JSON/ },
  ] as const;
  for (const { fault, error } of cases) {
    const mark = logMark(gw);
    const parseErrors = await discoveries(gw.url, 'parse', 'parse_error');
    const empties = await discoveries(gw.url, 'parse', 'empty');
    await setSimFaults(sim.url('parse'), { models: fault });

    const degraded = await waitForNode(gw, 'parse', modelState('degraded'), `${fault}: degraded`);
    const res = await chat(gw.url, 'm-parse');
    assert.equal(servedBy(res), 'parse', `${fault}: still routed on its last-known-good names`);
    assert.deepEqual(degraded.models.names, ['m-parse'], fault);
    assert.match(degraded.models.last_error ?? '', error, fault);
    assert.ok(degraded.models.fails >= 1 && degraded.models.fails < FAIL_THRESHOLD, fault);

    const expired = await waitForNode(gw, 'parse', modelState('expired'), `${fault}: expired`);
    // Expired at the threshold (degraded below it, checked above); a busy machine may read it a poll later.
    assert.ok(expired.models.fails >= FAIL_THRESHOLD, `${fault}: ${expired.models.fails} fails`);
    assert.equal(expired.status, 'healthy', `${fault}: health checks do not care`);
    assert.equal(noNodeBody(await chat(gw.url, 'm-parse')).exclusions.expired, 1, fault);
    assert.ok((await discoveries(gw.url, 'parse', 'parse_error')) - parseErrors >= FAIL_THRESHOLD, fault);
    assert.equal(await discoveries(gw.url, 'parse', 'empty'), empties, `${fault}: never counted as empty`);

    await restore('parse');
    const recovered = await nodeDetail(gw.url, 'parse');
    assert.equal(recovered?.models.fails, 0);
    assert.equal(recovered?.models.last_error, null);
    assert.equal(servedBy(await chat(gw.url, 'm-parse')), 'parse');
    assert.deepEqual(
      discoveryLogCounts(gw, 'parse', mark),
      { 'model discovery failed': 1, 'model discovery expired': 1, 'model discovery recovered': 1 },
      fault,
    );
  }
});

test('a /v1/models that never answers is a timeout: the names are kept and health is untouched', async () => {
  const mark = logMark(gw);
  const timeouts = await discoveries(gw.url, 'alpha', 'timeout');
  await setSimFaults(sim.url('alpha'), { models: 'hang' });
  try {
    await untilEvent(async () => (await discoveries(gw.url, 'alpha', 'timeout')) > timeouts, [listings(gw)], 'a timeout');
    const detail = await nodeDetail(gw.url, 'alpha');
    assert.match(detail?.models.last_error ?? '', /timed out after 3000 ms/);
    assert.deepEqual(detail?.models.names, ['m-alpha', 'm-shared']);
    assert.equal(detail?.status, 'healthy');
    assert.match(await metricsText(gw.url), /gateway_node_models_ok\{node="alpha"\} 0/);
  } finally {
    await restore('alpha');
  }
  assert.match(await metricsText(gw.url), /gateway_node_models_ok\{node="alpha"\} 1/);
  assert.deepEqual(discoveryLogCounts(gw, 'alpha', mark), { 'model discovery failed': 1, 'model discovery recovered': 1 });
});

test('gateway_model_discovery_total counts every fetch by node and result; each fetch is one request to the node', async () => {
  const text = await metricsText(gw.url);
  assert.match(text, /# TYPE gateway_model_discovery_total counter/);
  assert.match(text, /# TYPE gateway_model_filter_exclusions_total counter/);
  assert.match(text, /# TYPE gateway_node_models_ok gauge/);
  const seen = new Set<string>();
  for (const line of text.split('\n')) {
    const match = /^gateway_model_discovery_total\{node="[^"]+",result="([^"]+)"\} (\d+)/.exec(line);
    if (match?.[1] !== undefined && Number(match[2]) > 0) seen.add(match[1]);
  }
  assert.deepEqual([...seen].sort(), ['empty', 'error', 'ok', 'parse_error', 'timeout']);

  // The counter and the node's own recording agree (give or take the fetch in flight).
  const counted = (): Promise<number> =>
    Promise.all(['ok', 'empty', 'error', 'parse_error', 'timeout'].map((r) => discoveries(gw.url, 'beta', r))).then((v) =>
      v.reduce((a, b) => a + b, 0),
    );
  const fetched = await simCount(sim.url('beta'), '/v1/models');
  const total = await counted();
  assert.ok(Math.abs(fetched - total) <= 1, `beta: ${fetched} fetched, ${total} counted`);
});
