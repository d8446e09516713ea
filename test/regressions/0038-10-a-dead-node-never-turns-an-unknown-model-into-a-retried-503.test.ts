// Issue 38, item 10: with one node dead (its listing expired) — even one serving an unrelated
// model — a misspelt model got `503 no_healthy_node … (dead: 1, missing: 4)` with Retry-After: the
// openai client retried it twice and failed after 10 s instead of an instant 404; Claude Code hung
// past 120 s; a tenant asking for a model outside its scope got the same 503, telling it the node
// count and that one was dead. What must hold: a node's last known listing is what it would serve,
// so a name that no node's last listing takes is 404 model_not_found with the closest names on the
// first try (counted at the gateway: one request, no retry), in every dialect, whatever is dead; an
// out-of-scope name is that 404 and tells nothing of the fleet; a model listed only by the dead
// node stays 503 with Retry-After (known, unavailable now). A node that has never listed leaves
// the name in doubt only until its listing expires (fail_threshold failed fetches): then 404 too.
import { createServer } from 'node:net';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI, { NotFoundError } from 'openai';
import { startGateway } from '#test/fixtures/in-process-fleet.ts';
import { startTenantGateway, tenantsToml, vllmNode, type TenantGateway } from '#test/fixtures/tenant-gateway.ts';
import { gatewayConfig, modelState, waitForNode, requestsAnswered } from '#test/fixtures/gateway-state.ts';
import { httpJson, setSimFaults } from '#test/fixtures/http.ts';

const MODELS: Readonly<Record<string, string>> = {
  n1: 'qwen3-8B',
  n2: 'llama-3.1-8b',
  n3: 'mistral-7b',
  n4: 'gemma-2-9b',
  n5: 'phi-3-mini',
};
const FLEET = Object.entries(MODELS)
  .map(([name, model]) => vllmNode(name, [model]))
  .join('\n');
const OPS_KEY = 'sk-ops-everything-5b1e';
const TEAM_KEY = 'sk-team-qwen-only-8c2d';

let rig: TenantGateway;

before(async () => {
  rig = await startTenantGateway({
    fleet: FLEET,
    extra: tenantsToml([
      { name: 'ops', keys: [OPS_KEY] },
      { name: 'team', keys: [TEAM_KEY], models: ['qwen*'] },
    ]),
  });
  // n5 (serving only phi-3-mini, which nobody asks for) goes down: health fails, its listing expires.
  await setSimFaults(rig.sim.url('n5'), { health: 'fail', models: 'error500', inference: 'error500' });
  await waitForNode(rig.gw, 'n5', (d) => d.status === 'dead' && d.models.state === 'expired', 'dead, its listing expired');
});

after(async () => {
  await rig?.close();
});

/** Every request the gateway answered. */
const answered = (): Promise<number> => requestsAnswered(rig.gw.url);

test('the official openai client, unchanged (default retries), gets NotFoundError 404 with the closest models on its first try', async () => {
  const client = new OpenAI({ baseURL: `${rig.gw.url}/v1`, apiKey: OPS_KEY });
  const before_ = await answered();
  let caught: unknown;
  try {
    await client.chat.completions.create({ model: 'qwen3-8B-typo', messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 });
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof NotFoundError, `a NotFoundError, not ${String(caught)}`);
  assert.equal(caught.status, 404);
  assert.equal(caught.code, 'model_not_found');
  assert.match(caught.message, /The model 'qwen3-8B-typo' does not exist: no node serves it\. Closest served models: qwen3-8B/);
  const body = caught.error as { closest_models?: string[] } | undefined;
  assert.equal(body?.closest_models?.[0], 'qwen3-8B', JSON.stringify(caught.error));
  assert.equal(caught.headers.get('retry-after'), null, 'no Retry-After on a 404');
  assert.equal((await answered()) - before_, 1, 'the gateway answered one request: the client did not retry');
});

test('the Anthropic dialect (what Claude Code speaks) gets the 404 too, without Retry-After', async () => {
  const answer = await httpJson(
    'POST',
    `${rig.gw.url}/v1/messages`,
    { model: 'claude-qwen3-8B-typo', max_tokens: 4, messages: [{ role: 'user', content: 'hi' }] },
    { 'x-api-key': OPS_KEY, 'anthropic-version': '2023-06-01' },
  );
  assert.equal(answer.status, 404, answer.text);
  assert.equal(answer.headers['retry-after'], undefined);
  assert.doesNotMatch(answer.text, /dead|no_healthy_node/);
});

test('a tenant asking for a model outside its scope gets the unknown model 404, telling nothing of the fleet', async () => {
  for (const model of ['phi-3-mini', 'llama-3.1-8b', 'not-a-model']) {
    const answer = await httpJson(
      'POST',
      `${rig.gw.url}/v1/chat/completions`,
      { model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 },
      { authorization: `Bearer ${TEAM_KEY}` },
    );
    assert.equal(answer.status, 404, `${model}: ${answer.text}`);
    assert.equal(answer.headers['retry-after'], undefined);
    assert.doesNotMatch(answer.text, /dead|excluded|exclusions|missing|\bn[1-5]\b/, `${model}: nothing of the fleet is told`);
    const closest = answer.json<{ error: { closest_models: string[] } }>().error.closest_models;
    assert.deepEqual(closest, ['qwen3-8B'], 'suggestions only from inside the scope');
  }
});

test('a model listed only by the dead node is known but unavailable: 503 with Retry-After', async () => {
  const answer = await httpJson(
    'POST',
    `${rig.gw.url}/v1/chat/completions`,
    { model: 'phi-3-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 },
    { authorization: `Bearer ${OPS_KEY}` },
  );
  assert.equal(answer.status, 503, answer.text);
  assert.equal(answer.json<{ error: { code: string } }>().error.code, 'no_healthy_node');
  assert.ok(Number(answer.headers['retry-after']) >= 1, 'Retry-After is set');
});

/** A loopback port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

test('a node that has never listed (down since start) leaves room for doubt only until its listing expires: then 404', async () => {
  const port = await closedPort();
  const gw = await startGateway(
    gatewayConfig({
      health: { interval: '100ms', timeout: '5s', failThreshold: 2 },
      discovery: { interval: '100ms', timeout: '5s' },
      nodes: [
        { name: 'n1', url: rig.sim.url('n1'), kind: 'vllm' },
        { name: 'never', url: `http://127.0.0.1:${port}`, kind: 'vllm' },
      ],
    }),
  );
  try {
    await waitForNode(gw, 'n1', modelState('known'), 'listed');
    const never = await waitForNode(
      gw,
      'never',
      (d) => d.models.state === 'expired',
      'its listing expired without ever being taken',
    );
    assert.deepEqual(never.models.names, []);
    const answer = await httpJson('POST', `${gw.url}/v1/chat/completions`, {
      model: 'qwen3-8B-typo',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 4,
    });
    assert.equal(answer.status, 404, answer.text);
    assert.equal(answer.json<{ error: { closest_models: string[] } }>().error.closest_models[0], 'qwen3-8B');
  } finally {
    await gw.close();
  }
});
