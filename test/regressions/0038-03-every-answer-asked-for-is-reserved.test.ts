// Issue 38 item 3: a request's reservation counted one answer whatever it asked for. One request
// with `n: 100, max_tokens: 1000` reserved ~1,005 tokens, was admitted, and spent 100,005 against
// `tokens_per_day = 50000` and `tokens_per_minute = 20000`. What must hold: each answer asked for
// (`n` on chat and completions, `best_of` on completions) reserves max_tokens; a reservation no
// budget could ever hold — larger than the tenant's per-minute or per-day limit itself — is refused
// before admission, as OpenAI refuses a request larger than its TPM limit: 429 `type: "tokens"`,
// "Request too large … limit X, requested Y", `x-should-retry: false`, and the node never asked.
// The endpoints with no such field (Anthropic's Messages, Ollama's native API) reserve one answer.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI, { RateLimitError } from 'openai';
import { startGateway, startSimFleet, type GatewayUnderTest, type SimFleet } from '#test/fixtures/in-process-fleet.ts';
import { gatewayConfig, modelState, waitForNode } from '#test/fixtures/gateway-state.ts';
import { httpJson, simRequests } from '#test/fixtures/http.ts';

const FLEET = `[[node]]\nname = "fast"\nkind = "vllm"\nmodels = ["m"]\nttft = "1ms"\ntokens_per_second = 5000\n`;

const TENANTS = `
[[tenants]]
name = "team"
keys = ["sk-team"]
tokens_per_minute = 20000
tokens_per_day = 50000

[[tenants]]
name = "daily"
keys = ["sk-daily"]
tokens_per_day = 5000
`;

let sim: SimFleet;
let gw: GatewayUnderTest;

before(async () => {
  sim = await startSimFleet(FLEET);
  const config = gatewayConfig({
    health: { interval: '100ms', timeout: '5s', failThreshold: 2 },
    discovery: { interval: '100ms', timeout: '5s' },
    nodes: [{ name: 'fast', url: sim.url('fast'), kind: 'vllm' }],
    extra: TENANTS,
  });
  gw = await startGateway(config);
  await waitForNode(gw, 'fast', modelState('known'), 'known');
});

after(async () => {
  await gw?.close();
  await sim?.close();
});

// Retries allowed: a 429 that says x-should-retry: false must not be retried by the official client.
const client = (apiKey: string): OpenAI => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey, maxRetries: 2, timeout: 30_000 });

async function refused(send: () => Promise<unknown>): Promise<RateLimitError> {
  try {
    await send();
  } catch (error) {
    assert.ok(error instanceof RateLimitError, `expected a 429, got ${String(error)}`);
    return error;
  }
  assert.fail('the request was admitted');
}

const inferenceSeen = async (): Promise<number> =>
  (await simRequests(sim.url('fast'))).filter((r) => r.path === '/v1/chat/completions' || r.path === '/v1/completions').length;

test('n: 100 with max_tokens: 1000 is refused before admission, naming the limit and the reservation', async () => {
  const before = await inferenceSeen();
  const error = await refused(() =>
    client('sk-team').chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
      n: 100,
      max_tokens: 1000,
    }),
  );
  assert.equal(error.type, 'tokens');
  assert.equal(error.code, 'rate_limit_exceeded');
  assert.match(
    error.message,
    /Request too large for tenant 'team' on tokens per minute \(tokens_per_minute\): limit 20000, requested 1000\d\d\b/,
  );
  const requested = Number(/requested (\d+)/.exec(error.message)?.[1]);
  assert.ok(requested >= 100_000, `the reservation counts 100 answers of 1000 tokens: ${requested}`);
  assert.equal(error.headers.get('x-should-retry'), 'false');
  assert.equal(error.headers.get('retry-after'), null);
  assert.equal(await inferenceSeen(), before, 'the node was never asked');
  const report = await tenant('team');
  assert.equal(report.today.requests, 0, 'refused before admission: nothing counted');
});

test('best_of on completions is reserved per generated answer', async () => {
  const error = await refused(() =>
    client('sk-team').completions.create({ model: 'm', prompt: 'hi', best_of: 30, n: 2, max_tokens: 1000 }),
  );
  assert.match(error.message, /limit 20000, requested 300\d\d\b/);
});

test('an admitted request with n reserves each answer: the remaining tokens say so', async () => {
  const { response } = await client('sk-team')
    .chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }], n: 3, max_tokens: 1000 })
    .withResponse();
  assert.equal(response.status, 200);
  const remaining = Number(response.headers.get('x-ratelimit-remaining-tokens'));
  assert.ok(remaining <= 20_000 - 3_000, `3 × 1000 reserved at admission: ${remaining} remaining`);
});

test('a reservation larger than the day budget itself is refused on tokens_per_day', async () => {
  const error = await refused(() =>
    client('sk-daily').chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
      n: 10,
      max_tokens: 1000,
    }),
  );
  assert.match(
    error.message,
    /Request too large for tenant 'daily' on tokens per day \(tokens_per_day\): limit 5000, requested 100\d\d\b/,
  );
  assert.equal(error.headers.get('x-should-retry'), 'false');
  assert.equal((await tenant('daily')).today.requests, 0);
});

test('a stray n on an endpoint without answers to choose from reserves one answer', async () => {
  // Anthropic's Messages has no `n`: one answer of max_tokens, well within the day budget.
  const res = await httpJson(
    'POST',
    `${gw.url}/v1/messages`,
    { model: 'm', max_tokens: 100, n: 100, messages: [{ role: 'user', content: 'hi' }] },
    { 'x-api-key': 'sk-daily', 'anthropic-version': '2023-06-01' },
  );
  assert.equal(res.status, 200, res.text);
});

async function tenant(name: string): Promise<{ today: { requests: number } }> {
  const res = await httpJson('GET', `${gw.url}/admin/tenants`);
  const found = res.json<{ tenants: { name: string; today: { requests: number } }[] }>().tenants.find((t) => t.name === name);
  assert.ok(found !== undefined, `tenant ${name}`);
  return found;
}
