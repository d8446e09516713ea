// Priority classes over the real wire: a node with one slot is held by a long request; a batch
// tenant's requests queue, then an interactive tenant's request arrives — it reaches the node
// first, and /admin/explain shows the queue by class and tenant while they wait. A full queue sheds
// the newest batch request with 429 queue_full and Retry-After.
//
// Each request names its tenant by its key (`[[tenants]]`): `chat` is interactive, `bulk` batch,
// `hold` (the request that holds the slot) standard. The fleet runs on a manual clock, as in
// context-queue.test.ts.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '#src/core/clock.ts';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startGateway, startSimFleet, type GatewayUnderTest, type SimFleet } from '#test/fixtures/in-process-fleet.ts';
import { eventually, httpJson, simRequests, type JsonResponse } from '#test/fixtures/http.ts';
import { advanceUntil, settledFlag } from '#test/fixtures/test-clocks.ts';
import { chatOfTokens, explainOf, hostsOf, waitForHost } from '#test/fixtures/context.ts';

const FLEET = `
[[node]]
name = "one"
kind = "llamacpp"
models = ["m"]
slots = 1
ttft = "20ms"
tokens_per_second = 100
`;

const MAX_QUEUE = 4;
const KEYS = { hold: 'sk-hold-standard-01', chat: 'sk-chat-interactive-02', bulk: 'sk-bulk-batch-03' } as const;
const TENANTS = (Object.keys(KEYS) as (keyof typeof KEYS)[])
  .map(
    (name) =>
      `[[tenants]]\nname = "${name}"\nkeys = ["${KEYS[name]}"]\npriority = "${{ hold: 'standard', chat: 'interactive', bulk: 'batch' }[name]}"\n`,
  )
  .join('');
const as = (name: keyof typeof KEYS): Record<string, string> => ({ authorization: `Bearer ${KEYS[name]}` });

const fleetClock = new ManualClock();
let sim: SimFleet;
let gw: GatewayUnderTest;

before(async () => {
  sim = await startSimFleet(FLEET, { clock: fleetClock });
  gw = await startGateway(
    gatewayToml(
      [{ name: 'one', url: sim.url('one'), kind: 'llamacpp' }],
      `[routing]\nqueue_timeout = "20s"\nmax_queue = ${MAX_QUEUE}\n${TENANTS}`,
    ),
  );
  await waitForHost(gw, 'one', (h) => h.models?.m?.slots === 1, 'one slot known');
});

after(async () => {
  await gw?.close();
  await sim?.close();
});

async function queueDepth(): Promise<number> {
  return (await hostsOf(gw.url)).queue_depth.m ?? 0;
}

test('an interactive request overtakes the queued batch ones; a full queue sheds the newest batch request with 429', async () => {
  const hold = httpJson('POST', `${gw.url}/v1/chat/completions`, chatOfTokens('m', 1, { max_tokens: 150 }), as('hold'));
  await waitForHost(gw, 'one', (h) => h.leases.m?.requests === 1, 'the slot leased');

  // The batch requests go to /v1/completions, the interactive one to /v1/chat/completions: the node's recording shows the order.
  const bulk: Promise<JsonResponse>[] = [];
  for (let i = 0; i < MAX_QUEUE; i += 1) {
    bulk.push(httpJson('POST', `${gw.url}/v1/completions`, { model: 'm', prompt: 'abcd', max_tokens: 3 }, as('bulk')));
    await eventually(async () => (await queueDepth()) === i + 1, 15_000, `queue depth ${i + 1}`);
  }
  const chat = httpJson('POST', `${gw.url}/v1/chat/completions`, chatOfTokens('m', 1, { max_tokens: 2 }), as('chat'));
  // The first to answer is the shed batch request (with FIFO, the interactive one was refused instead).
  const shed = await Promise.race([
    bulk[MAX_QUEUE - 1]?.then((res) => ({ who: 'bulk', res })),
    chat.then((res) => ({ who: 'chat', res })),
  ]);
  assert.equal(shed?.who, 'bulk', shed?.res.text);
  assert.equal(shed?.res.status, 429, shed?.res.text);
  assert.ok(Number(shed?.res.headers['retry-after']) >= 1, 'Retry-After is set');
  const { error } = shed?.res.json<{ error: { type: unknown; code: unknown } }>() ?? { error: {} };
  assert.deepEqual({ type: error.type, code: error.code }, { type: 'rate_limit_error', code: 'queue_full' });

  const explained = await explainOf(gw.url, 'model=m');
  assert.deepEqual(explained.queue, {
    depth: MAX_QUEUE,
    by_class: { interactive: 1, standard: 0, batch: MAX_QUEUE - 1 },
    by_tenant: { bulk: MAX_QUEUE - 1, chat: 1 },
  });
  const refused = await httpJson('POST', `${gw.url}/v1/completions`, { model: 'm', prompt: 'abcd', max_tokens: 3 }, as('bulk'));
  assert.equal(refused.status, 429, 'a batch newcomer to a full queue is refused');

  const served = [hold, chat, ...bulk.slice(0, MAX_QUEUE - 1)];
  await advanceUntil(fleetClock, settledFlag(served), 'the hold and the waiters to finish');
  for (const res of await Promise.all(served)) assert.equal(res.status, 200, res.text);
  const arrived = (await simRequests(sim.url('one')))
    .filter((r) => r.method === 'POST' && r.path.startsWith('/v1/'))
    .map((r) => r.path);
  assert.deepEqual(
    arrived,
    ['/v1/chat/completions', '/v1/chat/completions', ...Array<string>(MAX_QUEUE - 1).fill('/v1/completions')],
    'the hold, the interactive one, then the batch ones',
  );
  assert.equal(await queueDepth(), 0);
});
