// The per-model wait queue over the real wire: a node with one slot and slow generation makes
// requests wait. They reach the node in the order they were sent (its own recording shows it), one
// more than `max_queue` gets 429 at once, one that waits past `queue_timeout` gets 429 with
// Retry-After, and gateway_queue_depth shows the depth while they wait.
//
// The fleet runs on a manual clock: the request holding the slot generates nothing until the test
// moves the fleet's time, so a busy machine cannot end the hold early. The gateway's clock (and so
// queue_timeout) is real.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '#src/core/clock.ts';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startGateway, startSimFleet, type GatewayUnderTest, type SimFleet } from '#test/fixtures/in-process-fleet.ts';
import { eventually, httpJson, simRequests, type JsonResponse } from '#test/fixtures/http.ts';
import { metric } from '#test/fixtures/gateway-state.ts';
import { advanceUntil, settledFlag } from '#test/fixtures/test-clocks.ts';
import { chatOfTokens, explainOf, hostsOf, waitForHost } from '#test/fixtures/context.ts';

const FLEET = `
[[node]]
name = "fifo"
kind = "llamacpp"
models = ["fifo-model"]
slots = 1
ttft = "20ms"
tokens_per_second = 100

[[node]]
name = "timed"
kind = "llamacpp"
models = ["timed-model"]
slots = 1
ttft = "20ms"
tokens_per_second = 100
`;

const MAX_QUEUE = 5;
const QUEUE_TIMEOUT_MS = 400;
/** Tokens of the request that holds the only slot: 1.5 s of the fleet's time at 100 tokens/s. */
const HOLD_TOKENS = 150;

const fleetClock = new ManualClock();

let sim: SimFleet;
let ordered: GatewayUnderTest;
let impatient: GatewayUnderTest;

before(async () => {
  sim = await startSimFleet(FLEET, { clock: fleetClock });
  [ordered, impatient] = await Promise.all([
    startGateway(
      gatewayToml(
        [{ name: 'fifo', url: sim.url('fifo'), kind: 'llamacpp' }],
        `[routing]\nqueue_timeout = "10s"\nmax_queue = ${MAX_QUEUE}\n`,
      ),
    ),
    startGateway(
      gatewayToml(
        [{ name: 'timed', url: sim.url('timed'), kind: 'llamacpp' }],
        `[routing]\nqueue_timeout = "${QUEUE_TIMEOUT_MS}ms"\n`,
      ),
    ),
  ]);
  await waitForHost(ordered, 'fifo', (h) => h.models?.['fifo-model']?.slots === 1, 'one slot known');
  await waitForHost(impatient, 'timed', (h) => h.models?.['timed-model']?.slots === 1, 'one slot known');
});

after(async () => {
  await ordered?.close();
  await impatient?.close();
  await sim?.close();
});

const INFERENCE = new Set(['/v1/chat/completions', '/v1/completions', '/v1/responses']);

/** A short request of `model` on `path`; the three endpoints share the model's one queue. */
function shortRequest(path: string, model: string): Record<string, unknown> {
  if (path === '/v1/completions') return { model, prompt: 'abcd', max_tokens: 3 };
  if (path === '/v1/responses') return { model, input: 'abcd', max_output_tokens: 3 };
  return chatOfTokens(model, 1, { max_tokens: 3 });
}

async function queueDepth(gatewayUrl: string, model: string): Promise<number> {
  return (await hostsOf(gatewayUrl)).queue_depth[model] ?? 0;
}

interface Hold {
  readonly answer: Promise<JsonResponse>;
  /** Whether the long request has finished (so the slot was free again). */
  done(): boolean;
}

/** Starts a long request and resolves once it holds the only slot. */
async function holdTheSlot(gatewayUrl: string, node: string, model: string): Promise<Hold> {
  let finished = false;
  const answer = httpJson(
    'POST',
    `${gatewayUrl}/v1/chat/completions`,
    chatOfTokens(model, 1, { max_tokens: HOLD_TOKENS }),
  ).finally(() => {
    finished = true;
  });
  await waitForHost(gatewayUrl, node, (h) => h.leases[model]?.requests === 1, 'the slot leased');
  return { answer, done: () => finished };
}

test('waiting requests reach the node in the order they were sent; one past max_queue gets 429 at once', async () => {
  await httpJson('POST', `${sim.url('fifo')}/__sim/reset`);
  const hold = await holdTheSlot(ordered.url, 'fifo', 'fifo-model');

  // Mixed endpoints, so the node's recording (which has no bodies) still shows the order.
  const pattern = ['/v1/completions', '/v1/chat/completions', '/v1/responses', '/v1/completions', '/v1/responses'];
  const finishedAt: number[] = [];
  const waiting: Promise<JsonResponse>[] = [];
  for (const [index, path] of pattern.entries()) {
    waiting.push(
      httpJson('POST', `${ordered.url}${path}`, shortRequest(path, 'fifo-model')).then((res) => {
        finishedAt[index] = performance.now();
        return res;
      }),
    );
    await eventually(async () => (await queueDepth(ordered.url, 'fifo-model')) === index + 1, 15_000, `queue depth ${index + 1}`);
  }
  assert.equal(await metric(ordered.url, 'gateway_queue_depth', { model: 'fifo-model' }), MAX_QUEUE);
  const explained = await explainOf(ordered.url, 'model=fifo-model');
  assert.equal(explained.outcome, 'queue');
  assert.equal(explained.nodes.find((n) => n.node === 'fifo')?.reason, 'no_slot');
  assert.deepEqual(
    explained.queue,
    { depth: MAX_QUEUE, by_class: { interactive: 0, standard: MAX_QUEUE, batch: 0 }, by_tenant: { default: MAX_QUEUE } },
    'the queue by class and tenant',
  );

  const overflow = await httpJson(
    'POST',
    `${ordered.url}/v1/chat/completions`,
    shortRequest('/v1/chat/completions', 'fifo-model'),
  );
  assert.equal(overflow.status, 429, overflow.text);
  assert.ok(Number(overflow.headers['retry-after']) >= 1, 'Retry-After is set');
  assert.deepEqual(pickError(overflow), { type: 'rate_limit_error', code: 'queue_full' });
  assert.equal(hold.done(), false, 'refused at once, while the queue was still full');

  await advanceUntil(fleetClock, settledFlag([hold.answer, ...waiting]), 'the hold and the waiters to finish');
  assert.equal((await hold.answer).status, 200);
  for (const res of await Promise.all(waiting)) assert.equal(res.status, 200, res.text);
  for (let i = 1; i < finishedAt.length; i++) {
    assert.ok((finishedAt[i] ?? 0) > (finishedAt[i - 1] ?? 0), `request ${i} finished after request ${i - 1}`);
  }
  const arrived = (await simRequests(sim.url('fifo')))
    .filter((r) => r.method === 'POST' && INFERENCE.has(r.path))
    .map((r) => r.path);
  assert.deepEqual(
    arrived,
    ['/v1/chat/completions', ...pattern],
    'the hold, then the waiters in send order; never the refused one',
  );
  assert.equal(await queueDepth(ordered.url, 'fifo-model'), 0);
  assert.ok(
    (await metric(ordered.url, 'gateway_queue_wait_seconds_count', { model: 'fifo-model', outcome: 'admitted' })) >= MAX_QUEUE,
  );
});

test('a request that waits longer than queue_timeout gets 429 with Retry-After and never reaches the node', async () => {
  await httpJson('POST', `${sim.url('timed')}/__sim/reset`);
  const hold = await holdTheSlot(impatient.url, 'timed', 'timed-model');
  const started = performance.now();
  const waiter = httpJson('POST', `${impatient.url}/v1/chat/completions`, shortRequest('/v1/chat/completions', 'timed-model'));
  await eventually(async () => (await queueDepth(impatient.url, 'timed-model')) === 1, 15_000, 'the request waiting');
  assert.equal(await metric(impatient.url, 'gateway_queue_depth', { model: 'timed-model' }), 1);
  const res = await waiter;
  const waitedMs = performance.now() - started;
  assert.equal(res.status, 429, res.text);
  assert.ok(Number(res.headers['retry-after']) >= 1, 'Retry-After is set');
  assert.deepEqual(pickError(res), { type: 'rate_limit_error', code: 'queue_timeout' });
  assert.ok(waitedMs >= QUEUE_TIMEOUT_MS - 50, `it waited its queue_timeout (${Math.round(waitedMs)} ms)`);
  assert.equal(await queueDepth(impatient.url, 'timed-model'), 0);
  assert.equal(await metric(impatient.url, 'gateway_queue_depth', { model: 'timed-model' }), 0);
  assert.equal(await metric(impatient.url, 'gateway_queue_wait_seconds_count', { model: 'timed-model', outcome: 'refused' }), 1);

  await advanceUntil(fleetClock, settledFlag([hold.answer]), 'the hold to finish');
  assert.equal((await hold.answer).status, 200);
  const arrived = (await simRequests(sim.url('timed'))).filter((r) => r.method === 'POST' && INFERENCE.has(r.path));
  assert.equal(arrived.length, 1, 'only the request holding the slot reached the node');
});

function pickError(res: JsonResponse): { type: unknown; code: unknown } {
  const { error } = res.json<{ error: { type: unknown; code: unknown } }>();
  return { type: error.type, code: error.code };
}
