// Unknown model vs unavailable model (issue 16, issue 38 item 10): 404 model_not_found, naming the
// closest served models, when no node's last known listing has the model (a failing or expired
// listing still says what its node would serve); 503 with Retry-After when the model is served but
// its nodes are down, or while a node that has never listed its models might serve it.
// The official openai client retries a 503 (twice by default) but never a 404: its attempts are
// counted through its own fetch.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI, { APIError } from 'openai';
import { startTenantGateway, vllmNode, type TenantGateway } from '#test/fixtures/tenant-gateway.ts';
import { setSimFaults } from '#test/fixtures/http.ts';
import { metric, modelState, waitForNode } from '#test/fixtures/gateway-state.ts';

const FLEET = ['alpha', 'beta'].map((name) => vllmNode(name, [`${name}-chat-8b`])).join('\n');

let fleet: TenantGateway;
let attempts = 0;
let client: OpenAI;

before(async () => {
  fleet = await startTenantGateway({ fleet: FLEET });
  const countingFetch: typeof fetch = (input, init) => {
    attempts += 1;
    return fetch(input, init);
  };
  client = new OpenAI({ baseURL: `${fleet.gw.url}/v1`, apiKey: 'unused', maxRetries: 2, timeout: 15_000, fetch: countingFetch });
});

after(async () => {
  await fleet?.close();
});

/** The client's error for one chat call, and how many HTTP attempts the client made for it. */
async function failedChat(model: string): Promise<{ error: APIError; attempts: number }> {
  const before_ = attempts;
  try {
    await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 });
  } catch (error) {
    assert.ok(error instanceof APIError, String(error));
    return { error, attempts: attempts - before_ };
  }
  assert.fail(`a chat for ${model} succeeded`);
}

const unroutable = (answer: string): Promise<number> => metric(fleet.gw.url, 'gateway_unroutable_requests_total', { answer });

test('a typo in a model name: 404 model_not_found with the closest served models, and the openai client does not retry', async () => {
  const counted = await unroutable('model_not_found');
  const { error, attempts: made } = await failedChat('alpha-chat-7b');
  assert.equal(error.status, 404);
  assert.equal(error.code, 'model_not_found');
  assert.equal(error.type, 'invalid_request_error');
  assert.equal(error.param, 'model');
  assert.match(
    error.message,
    /The model 'alpha-chat-7b' does not exist: no node serves it\. Closest served models: alpha-chat-8b, beta-chat-8b\./,
  );
  assert.equal(made, 1, 'a 404 is not retried');
  assert.equal((await unroutable('model_not_found')) - counted, 1);
});

test('a served model whose only node is dead: 503 with Retry-After, which the openai client retries twice', async (t) => {
  t.after(() => setSimFaults(fleet.sim.url('beta'), { health: 'none' }));
  await setSimFaults(fleet.sim.url('beta'), { health: 'fail' });
  await waitForNode(fleet.gw, 'beta', (d) => d.status === 'dead' && d.models.state === 'known', 'dead, its listing current');
  const counted = await unroutable('no_healthy_node');
  const { error, attempts: made } = await failedChat('beta-chat-8b');
  assert.equal(error.status, 503);
  assert.equal(error.code, 'no_healthy_node');
  assert.ok(Number(error.headers?.get('retry-after')) >= 1, 'Retry-After is set');
  assert.equal(made, 3, 'one attempt and two retries');
  assert.equal((await unroutable('no_healthy_node')) - counted, 3);
  await setSimFaults(fleet.sim.url('beta'), { health: 'none' });
  await waitForNode(fleet.gw, 'beta', (d) => d.status === 'healthy', 'healthy again');
});

test('a name no node lists while one listing is failing (degraded or expired): still 404, the last listing decides', async (t) => {
  t.after(() => setSimFaults(fleet.sim.url('alpha'), { models: 'none' }));
  await setSimFaults(fleet.sim.url('alpha'), { models: 'error500' });
  await waitForNode(fleet.gw, 'alpha', (d) => ['degraded', 'expired'].includes(d.models.state), 'its listing failing');
  const { error, attempts: made } = await failedChat('gamma-chat-8b');
  assert.equal(error.status, 404);
  assert.equal(error.code, 'model_not_found');
  assert.equal(made, 1, 'not retried');
  const listedThere = await failedChat('alpha-chat-7b');
  assert.match(
    listedThere.error.message,
    /Closest served models: alpha-chat-8b/,
    "the failing node's last listing is still suggested",
  );
  await setSimFaults(fleet.sim.url('alpha'), { models: 'none' });
  await waitForNode(fleet.gw, 'alpha', modelState('known'), 'known again');
});
