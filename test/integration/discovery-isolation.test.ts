// Isolation of the two control loops (issue 3): a node whose /v1/models hangs can neither delay nor
// change that node's health checks, nor any other node's discovery; and the other way round.
// Cadences are counted from the sim nodes' own request recordings over a fixed window.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, startSimFleet, type GatewayUnderTest, type SimFleet } from '#test/fixtures/in-process-fleet.ts';
import { eventually, setSimFaults, simRequests } from '#test/fixtures/http.ts';
import { chat, discoveries, gatewayConfig, nodeDetail, pause, servedBy, simCount, waitForNode } from '#test/fixtures/gateway-state.ts';

const FLEET = ['hung', 'other', 'third', 'slowprobe', 'late']
  .map((name) => `[[node]]\nname = "${name}"\nkind = "vllm"\nmodels = ["m-${name}"]\nttft = "2ms"\ntokens_per_second = 1000\n`)
  .join('\n')
  .concat('\n[[node]]\nname = "ollie"\nkind = "ollama"\nmodels = ["m-ollie"]\n');

const HEALTH_INTERVAL_MS = 100;
/** Long enough that a hung probe stays in flight for most of the measuring window. */
const HEALTH_TIMEOUT_MS = 1_000;
const DISCOVERY_INTERVAL_MS = 200;
/** Long enough that a hung listing stays in flight for the whole measuring window. */
const DISCOVERY_TIMEOUT_MS = 3_500;
const WINDOW_MS = 2_000;

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
    await waitForNode(gw.url, n.name, (d) => d.models.state === 'known' && d.status === 'healthy', 'known and healthy');
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

/** Counts, per `node:path`, the requests each sim node received during the window, sampling `watched`'s /health entry meanwhile. */
async function measure(paths: readonly (readonly [string, string])[], watched: string): Promise<Window> {
  const start = await Promise.all(paths.map(([node, path]) => simCount(sim.url(node), path)));
  const samples: Window['samples'] = [];
  const deadline = Date.now() + WINDOW_MS;
  while (Date.now() < deadline) {
    const detail = await nodeDetail(gw.url, watched);
    samples.push({ status: detail?.status ?? 'missing', state: detail?.models.state ?? 'missing' });
    await pause(50);
  }
  const end = await Promise.all(paths.map(([node, path]) => simCount(sim.url(node), path)));
  const counts: Record<string, number> = {};
  paths.forEach(([node, path], i) => {
    counts[`${node}:${path}`] = (end[i] ?? 0) - (start[i] ?? 0);
  });
  return { counts, samples };
}

test('a node whose listing has not answered yet (untried) is healthy and lets every model through', async (t) => {
  t.after(() => setSimFaults(sim.url('late'), { models: 'none' }));
  const late = await waitForNode(gw.url, 'late', (d) => d.status === 'healthy', 'healthy');
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

/**
 * At least 40% of the rounds a cadence should fit in the window: slack for a loaded machine, while a
 * loop that waits on the other one's hung request manages at most one round per timeout.
 */
const atLeast = (intervalMs: number): number => Math.floor((WINDOW_MS / intervalMs) * 0.4);

test('a node whose /v1/models hangs keeps its health-check cadence and status, and other nodes keep their discovery cadence', async () => {
  await setSimFaults(sim.url('hung'), { models: 'hang' });
  try {
    // Start measuring once a listing that arrived after the fault (so it hangs) is on the node.
    const listed = await simCount(sim.url('hung'), '/v1/models');
    await eventually(async () => (await simCount(sim.url('hung'), '/v1/models')) > listed, 3_000, 'a hanging listing');
    const window = await measure(
      [['hung', '/health'], ['hung', '/v1/models'], ['other', '/v1/models'], ['third', '/v1/models']],
      'hung',
    );
    assert.ok((window.counts['hung:/health'] ?? 0) >= atLeast(HEALTH_INTERVAL_MS), `hung /health probes: ${JSON.stringify(window.counts)}`);
    assert.ok((window.counts['other:/v1/models'] ?? 0) >= atLeast(DISCOVERY_INTERVAL_MS), `other listings: ${JSON.stringify(window.counts)}`);
    assert.ok((window.counts['third:/v1/models'] ?? 0) >= atLeast(DISCOVERY_INTERVAL_MS), `third listings: ${JSON.stringify(window.counts)}`);
    assert.equal(window.counts['hung:/v1/models'], 0, 'one listing in flight per node: the hung one');
    assert.ok(window.samples.length >= 5);
    assert.deepEqual(
      [...new Set(window.samples.map((s) => `${s.status}/${s.state}`))],
      ['healthy/known'],
      'health and the last listing are unchanged while the listing hangs',
    );
    assert.equal(servedBy(await chat(gw.url, 'm-hung')), 'hung', 'its models are still routed to it');

    // When the listing finally times out, that is a discovery failure only.
    await eventually(async () => (await discoveries(gw.url, 'hung', 'timeout')) >= 1, DISCOVERY_TIMEOUT_MS + 3_000, 'the timeout');
    const detail = await nodeDetail(gw.url, 'hung');
    assert.equal(detail?.models.state, 'degraded');
    assert.match(detail?.models.last_error ?? '', /timed out after 3500 ms/);
    assert.equal(detail?.status, 'healthy');
    assert.equal(detail?.fails, 0);
  } finally {
    await setSimFaults(sim.url('hung'), { models: 'none' });
  }
  await waitForNode(gw.url, 'hung', (d) => d.models.state === 'known', 'known again', DISCOVERY_TIMEOUT_MS + 3_000);
});

test('a node whose health endpoint hangs keeps its discovery cadence and its listing', async () => {
  await setSimFaults(sim.url('slowprobe'), { health: 'hang' });
  try {
    const window = await measure([['slowprobe', '/v1/models'], ['other', '/health']], 'slowprobe');
    assert.ok((window.counts['slowprobe:/v1/models'] ?? 0) >= atLeast(DISCOVERY_INTERVAL_MS), JSON.stringify(window.counts));
    assert.ok((window.counts['other:/health'] ?? 0) >= atLeast(HEALTH_INTERVAL_MS), JSON.stringify(window.counts));
    assert.deepEqual([...new Set(window.samples.map((s) => s.state))], ['known'], 'the listing stays known');
    // Meanwhile its health probes time out, as they should.
    const degraded = await waitForNode(gw.url, 'slowprobe', (d) => d.status !== 'healthy', 'not healthy');
    assert.match(degraded.last_error ?? '', /timed out after 1000ms/);
  } finally {
    await setSimFaults(sim.url('slowprobe'), { health: 'none' });
  }
  await waitForNode(gw.url, 'slowprobe', (d) => d.status === 'healthy' && d.models.state === 'known', 'healthy again');
});

test('an Ollama node of kind "auto" whose /v1/models hangs stays healthy: it is probed on /api/version, not on its model list', async () => {
  await setSimFaults(sim.url('ollie'), { models: 'hang' });
  try {
    const listed = await simCount(sim.url('ollie'), '/v1/models');
    await eventually(async () => (await simCount(sim.url('ollie'), '/v1/models')) > listed, 3_000, 'a hanging listing');
    const window = await measure([['ollie', '/api/version'], ['ollie', '/v1/models']], 'ollie');
    assert.ok((window.counts['ollie:/api/version'] ?? 0) >= atLeast(HEALTH_INTERVAL_MS), JSON.stringify(window.counts));
    assert.equal(window.counts['ollie:/v1/models'], 0, 'health probes do not ask for the model list');
    assert.deepEqual([...new Set(window.samples.map((s) => `${s.status}/${s.state}`))], ['healthy/known']);
  } finally {
    await setSimFaults(sim.url('ollie'), { models: 'none' });
  }
});
