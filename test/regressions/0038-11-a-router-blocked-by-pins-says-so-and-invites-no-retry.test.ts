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
import { startRouterRig, type RouterRig } from '#test/fixtures/router-fleet.ts';
import { waitForNode, requestsAnswered } from '#test/fixtures/gateway-state.ts';
import { httpJson, setSimFaults } from '#test/fixtures/http.ts';

const OPS_KEY = 'sk-ops-all-7f3a';
const SCOPED_KEY = 'sk-scoped-visitor-2e9b';

let rig: RouterRig;

before(async () => {
  rig = await startRouterRig({
    routers: [
      {
        name: 'solo',
        modelsMax: 1,
        loadTime: '20ms',
        models: [
          ['keeper', 'loaded'],
          ['visitor', 'unloaded'],
          ['shared', 'unloaded'],
        ],
      },
      { name: 'other', loadTime: '20ms', models: [['shared', 'loaded']] },
    ],
    gateway: [
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
  });
});

after(async () => {
  await rig?.close();
});

/** Every request the gateway answered. */
const answered = (): Promise<number> => requestsAnswered(rig.gw.url);

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
