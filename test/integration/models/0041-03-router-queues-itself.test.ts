// Issue 41, item 3: a llama-server router from build 10313 queues and coalesces its switches itself
// (docs/protocols.md §7.z5; the sim's router does it as the source does). Two models on
// --models-max 1 under 12 concurrent requests finish with no request waiting longer than one switch
// plus its bounded wait (routing.swap_after): with the router's queue alone (router_queue = "auto":
// the gateway holds nothing for the switch) and with the gateway's queue (router_queue = "gateway",
// served swap-aware). And the gateway's own queue serves "A B A A C" as "A A A B C". Router and
// gateway share one manual clock the test moves only while nothing is in motion: every wait is
// measured on it, never in wall time.
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { ManualClock } from '#src/core/clock.ts';
import { startRouterRig, routerLearned, type RouterModel, type RouterRig } from '#test/fixtures/router-fleet.ts';
import { eventually, httpJson, simRequests } from '#test/fixtures/http.ts';
import { advanceUntil } from '#test/fixtures/test-clocks.ts';

const LOAD_MS = 1_000;
const SWAP_AFTER_MS = 2_000;
/** The test's resolution: the clock moves this much between looks. */
const STEP_MS = 50;

interface Residency {
  readonly peakRunning: number;
  readonly loads: number;
  readonly queued: readonly string[];
  readonly unloadsMidRequest: number;
}

let rig: RouterRig | undefined;

afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

async function start(
  clock: ManualClock,
  routerQueue: 'auto' | 'gateway',
  models: readonly RouterModel[],
  more: readonly string[] = [],
): Promise<RouterRig> {
  const started = await startRouterRig({
    routers: [{ modelsMax: 1, loadTime: `${LOAD_MS}ms`, more: ['ttft = "100ms"', 'tokens_per_second = 100', ...more], models }],
    gateway: `[routing]\nqueue_timeout = "120s"\nload_timeout = "120s"\nswap_after = "${SWAP_AFTER_MS}ms"\nrouter_queue = "${routerQueue}"\n`,
    learned: false,
    options: { clock },
  });
  const loaded = models.filter(([, status]) => status === 'loaded').map(([id]) => id);
  let learned = false;
  void routerLearned(started.gw, { modelsMax: 1, loaded }).then(() => (learned = true));
  await advanceUntil(clock, () => learned, 'the router learned', { stepMs: 300 });
  return started;
}

interface Timed {
  readonly model: string;
  readonly sentAtMs: number;
  headAtMs?: number;
  status?: number;
}

/** A streamed chat; `headAtMs` is the clock's reading when its answer's head came (its wait ends there). */
function send(clock: ManualClock, url: string, model: string): { timed: Timed; done: Promise<void> } {
  const timed: Timed = { model, sentAtMs: clock.monotonicMs() };
  const done = request(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], stream: true, max_tokens: 5 }),
  }).then(async (res) => {
    timed.headAtMs = clock.monotonicMs();
    timed.status = res.statusCode;
    await res.body.text();
  });
  return { timed, done };
}

function queueWaits(metrics: string, model: string): number {
  const line = metrics
    .split('\n')
    .find((l) => l.startsWith(`gateway_queue_wait_seconds_count{model="${model}",outcome="admitted"}`));
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
}

/**
 * Moves the clock STEP_MS at a time until every request is answered, and only while nothing moves
 * (the router's requests, its answers, the heads received, the gateway's queue): however slow the
 * machine, time does not pass while a request travels, so no wait grows by the machine's load.
 */
async function answerAll(
  clock: ManualClock,
  on: RouterRig,
  sent: readonly { timed: Timed; done: Promise<void> }[],
): Promise<void> {
  let finished = false;
  void Promise.all(sent.map((s) => s.done)).then(() => (finished = true));
  let last = '';
  await eventually(
    async () => {
      if (finished) return true;
      const stats = (await httpJson('GET', `${on.sim.url('router')}/__sim/stats`)).json<Record<string, unknown>>();
      const hosts = (await httpJson('GET', `${on.gw.url}/admin/hosts`)).json<{ queue_depth: unknown }>();
      const seen = JSON.stringify([stats, hosts.queue_depth, sent.map((s) => s.timed.headAtMs ?? null)]);
      if (seen === last) clock.advance(STEP_MS);
      last = seen;
      return false;
    },
    120_000,
    'every request answered',
  );
}

/** Twelve requests at once, alternating between the loaded model and the other; every one answered. */
async function burst(clock: ManualClock, on: RouterRig): Promise<Timed[]> {
  const sent = Array.from({ length: 12 }, (_, i) => send(clock, on.gw.url, i % 2 === 0 ? 'model-a' : 'model-b'));
  await answerAll(clock, on, sent);
  return sent.map((s) => s.timed);
}

function assertBounded(timed: readonly Timed[]): number[] {
  assert.deepEqual(
    timed.map((t) => t.status),
    timed.map(() => 200),
  );
  const waits = timed.map((t) => (t.headAtMs ?? Infinity) - t.sentAtMs);
  const longest = Math.max(...waits);
  // One switch (the load) plus its bounded wait, at the test's resolution.
  assert.ok(
    longest <= LOAD_MS + SWAP_AFTER_MS + STEP_MS,
    `the longest wait was ${longest} ms on the clock (waits ${waits.join(', ')}); one switch plus swap_after is ${LOAD_MS + SWAP_AFTER_MS} ms`,
  );
  return waits;
}

const TWO_MODELS: readonly RouterModel[] = [
  ['model-a', 'loaded', 'slots = 1'],
  ['model-b', 'unloaded', 'slots = 1'],
];

test('router queue alone: 12 concurrent requests for two models at --models-max 1, one switch, none waits past one switch plus swap_after', async (t) => {
  const clock = new ManualClock();
  rig = await start(clock, 'auto', TWO_MODELS);
  const before = await rig.routerResidency<Residency>();
  const timed = await burst(clock, rig);
  const waits = assertBounded(timed);
  const after = await rig.routerResidency<Residency>();
  t.diagnostic(`router queue: waits on the clock (ms, a b a b …) ${waits.join(' ')}; loads ${after.loads - before.loads}`);
  assert.equal(after.loads - before.loads, 1, 'the router switched once: its queue merged the six model-b requests');
  assert.equal(after.peakRunning, 1);
  assert.equal(after.unloadsMidRequest, 0);
  const metrics = await rig.gw.metrics();
  assert.equal(queueWaits(metrics, 'model-b'), 0, 'the gateway held no model-b request: it did not queue a second time');
  assert.equal(queueWaits(metrics, 'model-a'), 0, 'nor a model-a request for a slot the router queues for');
  const arrivals = (await simRequests(rig.sim.url('router'))).filter((r) => r.path === '/v1/chat/completions');
  assert.equal(arrivals.length, 12, 'every request reached the router (as it arrived)');
});

test('gateway queue: the same burst, held in the gateway and served swap-aware, one switch, none waits past one switch plus swap_after', async (t) => {
  const clock = new ManualClock();
  rig = await start(clock, 'gateway', TWO_MODELS);
  const before = await rig.routerResidency<Residency>();
  const timed = await burst(clock, rig);
  const waits = assertBounded(timed);
  const after = await rig.routerResidency<Residency>();
  t.diagnostic(`gateway queue: waits on the clock (ms, a b a b …) ${waits.join(' ')}; loads ${after.loads - before.loads}`);
  assert.equal(after.loads - before.loads, 1, 'one switch: model-a drained first, model-b after');
  assert.equal(after.peakRunning, 1);
  assert.deepEqual(after.queued, []);
  const metrics = await rig.gw.metrics();
  assert.ok(queueWaits(metrics, 'model-b') > 0, 'the gateway held the model-b requests for the switch');
});

test('the gateway queue serves "A B A A C" as "A A A B C" on a --models-max 1 router (three models: the gateway holds the switches)', async () => {
  const clock = new ManualClock();
  rig = await start(clock, 'auto', [
    ['model-a', 'loaded', 'slots = 1'],
    ['model-b', 'unloaded', 'slots = 1'],
    ['model-c', 'unloaded', 'slots = 1'],
  ]);
  const on = rig;
  const depth = async (): Promise<number> =>
    Object.values(
      (await httpJson('GET', `${on.gw.url}/admin/hosts`)).json<{ queue_depth: Record<string, number> }>().queue_depth,
    ).reduce((a, b) => a + b, 0);
  const chats = async (): Promise<string[]> =>
    (await simRequests(on.sim.url('router'))).filter((r) => r.path === '/v1/chat/completions').map((r) => r.model ?? '?');
  const sent = [send(clock, on.gw.url, 'model-a')];
  // A1 reaches the router and holds its only slot (the clock stands still: it does not finish).
  await advanceUntil(clock, async () => (await chats()).length === 1, 'A1 at the router', { stepMs: 0 });
  let queued = 0;
  for (const model of ['model-b', 'model-a', 'model-a', 'model-c']) {
    sent.push(send(clock, on.gw.url, model));
    queued += 1;
    const want = queued;
    await advanceUntil(clock, async () => (await depth()) === want, `${model} held in the gateway (${want})`, { stepMs: 0 });
  }
  await answerAll(clock, on, sent);
  assert.deepEqual(
    sent.map((s) => s.timed.status),
    [200, 200, 200, 200, 200],
  );
  assert.deepEqual(await chats(), ['model-a', 'model-a', 'model-a', 'model-b', 'model-c'], 'served A A A B C');
  const residency = await on.routerResidency<Residency>();
  assert.equal(residency.loads, 2, 'two switches: b, then c');
});

test('a request for the model the router is unloading waits in the gateway until the switch shows, never reaching the exiting child', async () => {
  const clock = new ManualClock();
  // The victim's child takes 300 ms to exit; the router lists it `loaded` until then and proxies a
  // request for it to the exiting child (500 "proxy error: Could not establish connection").
  rig = await start(
    clock,
    'auto',
    [
      ['model-a', 'unloaded', 'slots = 1'],
      ['model-b', 'loaded', 'slots = 1'],
    ],
    ['unload_time = "300ms"'],
  );
  const on = rig;
  const chats = async (): Promise<string[]> =>
    (await simRequests(on.sim.url('router'))).filter((r) => r.path === '/v1/chat/completions').map((r) => r.model ?? '?');
  const first = send(clock, on.gw.url, 'model-a');
  await advanceUntil(clock, async () => (await chats()).length === 1, 'A at the router, which unloads B for it', { stepMs: 0 });
  const second = send(clock, on.gw.url, 'model-b');
  await answerAll(clock, on, [first, second]);
  assert.deepEqual([first.timed.status, second.timed.status], [200, 200]);
  assert.deepEqual(await chats(), ['model-a', 'model-b'], 'B was sent once, after the switch showed');
  const residency = await on.routerResidency<Residency>();
  assert.equal(residency.loads, 2, 'A, then B again');
});
