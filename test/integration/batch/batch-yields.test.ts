// Issue 44: a batch runs only in spare capacity. On a node with two slots (its fleet on a manual
// clock, so a request holds its slot until the test moves that clock), a 12-line batch of a
// `standard` tenant fills the two slots and queues nothing (the runner sends no line the fleet has
// no slot for); an interactive request that arrives waits only for the first slot to free — it
// reaches the node before every batch line sent after it — and while it waits the batch adds
// nothing. The batch then completes.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { ManualClock } from '#src/core/clock.ts';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startGateway, startSimFleet, type GatewayUnderTest, type SimFleet } from '#test/fixtures/in-process-fleet.ts';
import { eventually, httpJson, simRequests } from '#test/fixtures/http.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { advanceUntil } from '#test/fixtures/test-clocks.ts';
import { hostsOf, waitForHost } from '#test/fixtures/context.ts';
import { tempStateDir, type TempStateDir } from '#test/fixtures/state-dirs.ts';
import { chatLine, upload } from './batch-fixture.ts';

const FLEET = `
[[node]]
name = "one"
kind = "llamacpp"
models = ["m"]
slots = 2
ttft = "20ms"
tokens_per_second = 100
`;
const BULK_KEY = 'sk-bulk-standard-01';
const CHAT_KEY = 'sk-chat-interactive-02';
const TENANTS = `[[tenants]]\nname = "bulk"\nkeys = ["${BULK_KEY}"]\npriority = "standard"\n[[tenants]]\nname = "chat"\nkeys = ["${CHAT_KEY}"]\npriority = "interactive"\n`;

const fleetClock = new ManualClock();
let sim: SimFleet;
let gw: GatewayUnderTest;
let state: TempStateDir;

before(async () => {
  state = tempStateDir();
  sim = await startSimFleet(FLEET, { clock: fleetClock });
  gw = await startGateway(
    gatewayToml(
      [{ name: 'one', url: sim.url('one'), kind: 'llamacpp' }],
      `[routing]\nqueue_timeout = "60s"\n${TENANTS}`,
      `state_dir = "${state.dir}"`,
    ),
  );
  await waitForHost(gw, 'one', (h) => h.models?.m?.slots === 2, 'two slots known');
});

after(async () => {
  await gw?.close();
  await sim?.close();
  state?.remove();
});

const posts = async (): Promise<string[]> =>
  (await simRequests(sim.url('one'))).filter((r) => r.method === 'POST' && r.path.startsWith('/v1/')).map((r) => r.path);

test('a batch fills only the free slots; an interactive request waits for one slot, then goes before every later line', async () => {
  const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: BULK_KEY, maxRetries: 0, timeout: 60_000 });
  const file = await upload(
    client,
    Array.from({ length: 12 }, (_, i) => chatLine(`b${i}`, 'm', `line ${i}`, { max_tokens: 20 })),
  );
  const batch = await client.batches.create({
    input_file_id: file.id,
    endpoint: '/v1/chat/completions',
    completion_window: '24h',
  });
  await untilEvent(async () => (await posts()).length === 2, [sim.activity('one')], 'the two slots filled by batch lines');
  // Many runner ticks later: still two, and no batch line waits in the gateway's queue.
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.equal((await posts()).length, 2, 'no line beyond the free slots');
  assert.equal((await hostsOf(gw.url)).queue_depth.m ?? 0, 0, 'no batch line queued');
  // An interactive request arrives: both slots are the batch's, so it queues — at the head.
  const chat = httpJson(
    'POST',
    `${gw.url}/v1/completions`,
    { model: 'm', prompt: 'hello', max_tokens: 2 },
    { authorization: `Bearer ${CHAT_KEY}` },
  );
  await eventually(async () => ((await hostsOf(gw.url)).queue_depth.m ?? 0) === 1, 30_000, 'the interactive request queued');
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal((await posts()).length, 2, 'while it waits, the batch adds nothing');
  await advanceUntil(fleetClock, async () => (await posts()).length >= 3, 'a slot freed', { stepMs: 50 });
  const order = await posts();
  assert.equal(order[2], '/v1/completions', `the interactive request took the first freed slot: ${order.join(', ')}`);
  const answered = { done: false };
  void chat.then(() => (answered.done = true));
  await advanceUntil(
    fleetClock,
    async () => answered.done && (await client.batches.retrieve(batch.id)).status === 'completed',
    'the interactive answer and the whole batch',
    { stepMs: 100, timeoutMs: 240_000 },
  );
  assert.equal((await chat).status, 200);
  const done = await client.batches.retrieve(batch.id);
  assert.deepEqual(done.request_counts, { total: 12, completed: 12, failed: 0 });
  assert.equal((await posts()).filter((p) => p === '/v1/chat/completions').length, 12, 'each line once');
});
