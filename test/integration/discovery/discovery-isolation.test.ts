// Isolation of the two control loops (issue 3): a node whose /v1/models hangs can neither delay nor
// change that node's health checks, nor any other node's discovery; and the other way round.
// Cadences are counted from the sim nodes' own request recordings: each loop must reach a number of
// rounds that a loop stuck behind the hung request could not reach before that request times out.
// Waiting for counts (not counting over a fixed window) keeps a busy machine from failing the test.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, startSimFleet, type GatewayUnderTest, type SimFleet } from '#test/fixtures/in-process-fleet.ts';
import { eventually, setSimFaults, simRequests } from '#test/fixtures/http.ts';
import {
  chat,
  discoveries,
  gatewayConfig,
  nodeDetail,
  pause,
  servedBy,
  simCount,
  waitForNode,
} from '#test/fixtures/gateway-state.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { listings } from '#test/fixtures/gateway-waits.ts';

const FLEET = ['hung', 'other', 'third', 'slowprobe', 'late']
  .map((name) => `[[node]]\nname = "${name}"\nkind = "vllm"\nmodels = ["m-${name}"]\nttft = "2ms"\ntokens_per_second = 1000\n`)
  .join('\n')
  .concat('\n[[node]]\nname = "ollie"\nkind = "ollama"\nmodels = ["m-ollie"]\n');

const HEALTH_INTERVAL_MS = 100;
/** A loop stuck behind a hung probe manages at most one round per this. */
const HEALTH_TIMEOUT_MS = 2_000;
const DISCOVERY_INTERVAL_MS = 200;
/**
 * A hung listing stays in flight this long: far longer than a measurement may take, so that a busy
 * machine (slow to notice the hang, slow to measure) still measures while it hangs.
 */
const DISCOVERY_TIMEOUT_MS = 10_000;
/** The most a measurement may take; below DISCOVERY_TIMEOUT_MS, so the hung listing is still in flight. */
const MEASURE_LIMIT_MS = 3_500;
/** Health rounds to wait for: 8 at 100 ms; a loop stuck behind a 2 s or 10 s hang reaches at most 3 in 3.5 s. */
const HEALTH_ROUNDS = 8;
/** Listings to wait for: 4 at 200 ms; a loop stuck behind a 2 s or 10 s hang reaches at most 3 in 3.5 s. */
const DISCOVERY_ROUNDS = 4;
/** /health samples of the watched node to take at least, however soon the targets are reached. */
const MIN_SAMPLES = 5;

let sim: SimFleet;
let gw: GatewayUnderTest;

before(async () => {
  sim = await startSimFleet(FLEET);
  // "late" never answers its first listings: it stays untried (failures below fail_threshold).
  await setSimFaults(sim.url('late'), { models: 'hang' });
  const config = gatewayConfig({
    health: { interval: `${HEALTH_INTERVAL_MS}ms`, timeout: `${HEALTH_TIMEOUT_MS}ms`, failThreshold: 3 },
    discovery: { interval: `${DISCOVERY_INTERVAL_MS}ms`, timeout: `${DISCOVERY_TIMEOUT_MS}ms` },
    // "ollie" is an Ollama server configured as kind "auto" (the default).
    nodes: sim.nodes.map((n) => ({ name: n.name, url: n.url, kind: n.kind === 'ollama' ? 'auto' : 'vllm' })),
  });
  gw = await startGateway(config);
  for (const n of sim.nodes) {
    if (n.name === 'late') continue;
    await waitForNode(gw, n.name, (d) => d.models.state === 'known' && d.status === 'healthy', 'known and healthy');
  }
});

after(async () => {
  await gw?.close();
  await sim?.close();
});

interface Window {
  readonly counts: Record<string, number>;
  readonly samples: { status: string; state: string }[];
}

/**
 * Counts, per `node:path`, the requests each sim node receives from now until every target is
 * reached (a target of 0 only counts), sampling `watched`'s /health entry meanwhile (MIN_SAMPLES at least). Fails when
 * the targets are not all reached within MEASURE_LIMIT_MS.
 */
async function measure(targets: readonly (readonly [string, string, number])[], watched: string): Promise<Window> {
  const countsNow = (): Promise<number[]> => Promise.all(targets.map(([node, path]) => simCount(sim.url(node), path)));
  const start = await countsNow();
  const samples: Window['samples'] = [];
  const counts: Record<string, number> = {};
  const deadline = Date.now() + MEASURE_LIMIT_MS;
  for (;;) {
    const detail = await nodeDetail(gw.url, watched);
    samples.push({ status: detail?.status ?? 'missing', state: detail?.models.state ?? 'missing' });
    const now = await countsNow();
    targets.forEach(([node, path], i) => {
      counts[`${node}:${path}`] = (now[i] ?? 0) - (start[i] ?? 0);
    });
    const reached = targets.every(([node, path, target]) => (counts[`${node}:${path}`] ?? 0) >= target);
    if (reached && samples.length >= MIN_SAMPLES) return { counts, samples };
    assert.ok(
      Date.now() < deadline,
      `targets ${JSON.stringify(targets)} not reached within ${MEASURE_LIMIT_MS} ms: ${JSON.stringify(counts)}`,
    );
    await pause(50);
  }
}

/**
 * Makes `node`'s listings hang and returns once one that arrived after the fault is hanging: one
 * arrived, and no other followed within five discovery intervals (one listing in flight per node).
 * Counted before the fault is set: the hanging listing may arrive before any count read after it,
 * and no later listing arrives until it times out.
 */
async function hangListings(node: string): Promise<void> {
  const listed = await simCount(sim.url(node), '/v1/models');
  await setSimFaults(sim.url(node), { models: 'hang' });
  await eventually(
    async () => {
      const arrived = await simCount(sim.url(node), '/v1/models');
      if (arrived <= listed) return false;
      await pause(5 * DISCOVERY_INTERVAL_MS);
      return (await simCount(sim.url(node), '/v1/models')) === arrived;
    },
    15_000,
    'a hanging listing',
  );
}

test('a node whose listing has not answered yet (untried) is healthy and lets every model through', async (t) => {
  t.after(() => setSimFaults(sim.url('late'), { models: 'none' }));
  const late = await waitForNode(gw, 'late', (d) => d.status === 'healthy', 'healthy');
  assert.equal(late.models.state, 'untried');
  assert.equal(servedBy(await chat(gw.url, 'm-late')), 'late');
  // Any model: the known nodes do not list it, the untried one is asked (and answers 404).
  const asked = async (): Promise<number> =>
    (await simRequests(sim.url('late'))).filter((r) => r.path === '/v1/chat/completions' && r.model === 'anything-at-all').length;
  const before_ = await asked();
  const res = await chat(gw.url, 'anything-at-all');
  assert.equal(res.status, 404, res.text);
  assert.equal(await asked(), before_ + 1, 'the untried node was asked');
});

test('a node whose /v1/models hangs keeps its health-check cadence and status, and other nodes keep their discovery cadence', async () => {
  await hangListings('hung');
  try {
    const window = await measure(
      [
        ['hung', '/health', HEALTH_ROUNDS],
        ['hung', '/v1/models', 0],
        ['other', '/v1/models', DISCOVERY_ROUNDS],
        ['third', '/v1/models', DISCOVERY_ROUNDS],
      ],
      'hung',
    );
    assert.equal(window.counts['hung:/v1/models'], 0, 'one listing in flight per node: the hung one');
    assert.ok(window.samples.length >= MIN_SAMPLES);
    assert.deepEqual(
      [...new Set(window.samples.map((s) => `${s.status}/${s.state}`))],
      ['healthy/known'],
      'health and the last listing are unchanged while the listing hangs',
    );
    assert.equal(servedBy(await chat(gw.url, 'm-hung')), 'hung', 'its models are still routed to it');

    // When the listing finally times out, that is a discovery failure only.
    await untilEvent(async () => (await discoveries(gw.url, 'hung', 'timeout')) >= 1, [listings(gw)], 'the timeout');
    const detail = await nodeDetail(gw.url, 'hung');
    assert.equal(detail?.models.state, 'degraded');
    assert.match(detail?.models.last_error ?? '', /timed out after 10000 ms/);
    assert.equal(detail?.status, 'healthy');
    assert.equal(detail?.fails, 0);
  } finally {
    await setSimFaults(sim.url('hung'), { models: 'none' });
  }
  await waitForNode(gw, 'hung', (d) => d.models.state === 'known', 'known again', DISCOVERY_TIMEOUT_MS + 10_000);
});

test('a node whose health endpoint hangs keeps its discovery cadence and its listing', async () => {
  await setSimFaults(sim.url('slowprobe'), { health: 'hang' });
  try {
    const window = await measure(
      [
        ['slowprobe', '/v1/models', DISCOVERY_ROUNDS],
        ['other', '/health', HEALTH_ROUNDS],
      ],
      'slowprobe',
    );
    assert.deepEqual([...new Set(window.samples.map((s) => s.state))], ['known'], 'the listing stays known');
    // Meanwhile its health probes time out, as they should.
    const degraded = await waitForNode(gw, 'slowprobe', (d) => d.status !== 'healthy', 'not healthy');
    assert.match(degraded.last_error ?? '', /timed out after 2000ms/);
  } finally {
    await setSimFaults(sim.url('slowprobe'), { health: 'none' });
  }
  await waitForNode(gw, 'slowprobe', (d) => d.status === 'healthy' && d.models.state === 'known', 'healthy again');
});

test('an Ollama node of kind "auto" whose /v1/models hangs stays healthy: it is probed on /api/version, not on its model list', async () => {
  await hangListings('ollie');
  try {
    const window = await measure(
      [
        ['ollie', '/api/version', HEALTH_ROUNDS],
        ['ollie', '/v1/models', 0],
      ],
      'ollie',
    );
    assert.equal(window.counts['ollie:/v1/models'], 0, 'health probes do not ask for the model list');
    assert.deepEqual([...new Set(window.samples.map((s) => `${s.status}/${s.state}`))], ['healthy/known']);
  } finally {
    await setSimFaults(sim.url('ollie'), { models: 'none' });
  }
});
