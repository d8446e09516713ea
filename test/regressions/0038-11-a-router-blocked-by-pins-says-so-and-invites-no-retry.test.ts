// Issue 38, item 11: a request for a model whose only router is full of pinned models was answered
// `503 no healthy node … (pinned: 1)` with Retry-After: 5, though no retry can succeed until the
// config changes: the openai client retried it twice. What must hold: the answer says what blocks
// it (the model, the router, the pinned models, its --models-max and what to change), carries no
// Retry-After and says `x-should-retry: false`, so the official openai client (default retries)
// sends it once; a client held to a model scope is not told the router's or the pinned models'
// names. A model another node could still take once it recovers keeps the ordinary 503.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI, { APIError } from 'openai';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startFleetAndGateway, type FleetAndGateway } from '#test/fixtures/in-process-fleet.ts';
import { waitForHost } from '#test/fixtures/admin-readers.ts';
import { metricsText, waitForNode } from '#test/fixtures/gateway-state.ts';
import { httpJson, setSimFaults } from '#test/fixtures/http.ts';

const FLEET = `
[[node]]
name = "solo"
kind = "llamacpp-router"
models_max = 1
load_time = "20ms"

[[node.model]]
id = "keeper"
status = "loaded"

[[node.model]]
id = "visitor"
status = "unloaded"

[[node.model]]
id = "shared"
status = "unloaded"

[[node]]
name = "other"
kind = "llamacpp-router"
models_max = 2
load_time = "20ms"

[[node.model]]
id = "shared"
status = "loaded"
`;
const OPS_KEY = 'sk-ops-all-7f3a';
const SCOPED_KEY = 'sk-scoped-visitor-2e9b';

let rig: FleetAndGateway;

before(async () => {
  rig = await startFleetAndGateway(FLEET, (sim) =>
    gatewayToml(
      [
        { name: 'solo', url: sim.url('solo'), kind: 'llamacpp' },
        { name: 'other', url: sim.url('other'), kind: 'llamacpp' },
      ],
      [
        '[routing]',
        'queue_timeout = "3s"',
        '[[models.available]]',
        'name = "keeper"',
        'pin = true',
        '[[tenants]]',
        'name = "ops"',
        `keys = ["${OPS_KEY}"]`,
        '[[tenants]]',
        'name = "scoped"',
        `keys = ["${SCOPED_KEY}"]`,
        'models = ["visitor", "shared"]',
      ].join('\n'),
    ),
  );
  await waitForHost(rig.gw, 'solo', (h) => h.router?.max_instances === 1 && h.loaded.includes('keeper'), 'solo discovered');
  await waitForHost(rig.gw, 'other', (h) => h.loaded.includes('shared'), 'other discovered');
});

after(async () => {
  await rig?.close();
});

/** Every request the gateway answered (gateway_requests_total, all labels summed). */
async function answered(): Promise<number> {
  let sum = 0;
  for (const line of (await metricsText(rig.gw.url)).split('\n')) {
    const match = /^gateway_requests_total(?:\{.*\})? (\S+)$/.exec(line);
    if (match !== null) sum += Number(match[1]);
  }
  return sum;
}

function chat(model: string, key: string): Promise<{ status: number; text: string; headers: Record<string, unknown> }> {
  return httpJson(
    'POST',
    `${rig.gw.url}/v1/chat/completions`,
    { model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 },
    { authorization: `Bearer ${key}` },
  );
}

test('blocked by a pinned model: a 503 that names what blocks it, with no Retry-After and x-should-retry: false', async () => {
  const answer = await chat('visitor', OPS_KEY);
  assert.equal(answer.status, 503, answer.text);
  assert.equal(answer.headers['retry-after'], undefined, 'no retry is invited');
  assert.equal(answer.headers['x-should-retry'], 'false');
  const error = JSON.parse(answer.text).error as { code: string; message: string };
  assert.equal(error.code, 'blocked_by_pinned_models');
  assert.match(
    error.message,
    /model 'visitor' cannot be loaded \(router solo: its slots are held by pinned model\(s\) keeper \(1\/1 loaded, max_instances = its --models-max\)/,
  );
  assert.match(error.message, /Change \[\[models\.available\]\] pin or the router's --models-max/);
  const explained = await rig.gw.explain('model=visitor');
  assert.equal(explained.outcome, 'blocked_by_pinned_models');
});

test('the official openai client, unchanged (default retries), sends it once', async () => {
  const client = new OpenAI({ baseURL: `${rig.gw.url}/v1`, apiKey: OPS_KEY });
  const before_ = await answered();
  let caught: unknown;
  try {
    await client.chat.completions.create({ model: 'visitor', messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 });
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof APIError, String(caught));
  assert.equal(caught.status, 503);
  assert.equal((await answered()) - before_, 1, 'the gateway answered one request: the client did not retry');
});

test('a client held to a model scope is told it is blocked, not the router or the pinned models', async () => {
  const answer = await chat('visitor', SCOPED_KEY);
  assert.equal(answer.status, 503, answer.text);
  assert.equal(answer.headers['retry-after'], undefined);
  assert.equal(answer.headers['x-should-retry'], 'false');
  assert.doesNotMatch(answer.text, /solo|keeper|exclusions/);
});

test('a model another router could take once it recovers keeps the ordinary 503 with Retry-After', async (t) => {
  t.after(async () => {
    await setSimFaults(rig.sim.url('other'), { health: 'none' });
    await waitForNode(rig.gw, 'other', (d) => d.status === 'healthy', 'healthy again');
  });
  await setSimFaults(rig.sim.url('other'), { health: 'fail' });
  await waitForNode(rig.gw, 'other', (d) => d.status === 'dead', 'dead');
  const answer = await chat('shared', OPS_KEY);
  assert.equal(answer.status, 503, answer.text);
  assert.equal(JSON.parse(answer.text).error.code, 'no_healthy_node');
  assert.ok(Number(answer.headers['retry-after']) >= 1, 'a retry may succeed once the other router is back');
  assert.equal(answer.headers['x-should-retry'], undefined);
});
