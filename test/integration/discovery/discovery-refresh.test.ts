// Refresh-on-miss (issue 3): a request for a model no node is known to serve triggers an immediate
// listing round for the nodes whose state could change the answer, rate-limited per node by
// discovery.miss_cooldown, and waits up to discovery.miss_wait (0 = not at all) before deciding.
//
// Scheduled discovery runs once an hour here, so every listing after the first is a refresh. The
// cooldown is an hour too, on a clock the test jumps forward: no load can make it pass early.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, startSimFleet, type GatewayUnderTest, type SimFleet } from '#test/fixtures/in-process-fleet.ts';
import { setSimFaults } from '#test/fixtures/http.ts';
import { JumpingClock } from '#test/fixtures/test-clocks.ts';
import { chat, gatewayConfig, modelState, servedBy, simCount, waitForNode } from '#test/fixtures/gateway-state.ts';

const FLEET = ['s', 'r', 'w', 'x', 'grp', 'z']
  .map((name) => `[[node]]\nname = "${name}"\nkind = "vllm"\nmodels = ["m-${name}"]\nttft = "2ms"\ntokens_per_second = 1000\n`)
  .join('\n');

const MISS_WAIT_MS = 1_500;
const MISS_COOLDOWN_MS = 3_600_000;
/** A hung listing is given up after this: far longer than miss_wait. */
const LISTING_TIMEOUT = '30s';

/** The `waiting` gateway's clock. */
const clock = new JumpingClock();

let sim: SimFleet;
/** miss_wait 1.5 s, miss_cooldown 1 h (on `clock`). */
let waiting: GatewayUnderTest;
/** miss_wait 0 (the default), no cooldown. */
let notWaiting: GatewayUnderTest;

function configText(
  nodes: readonly { name: string; group?: string }[],
  discovery: Readonly<Record<string, string>>,
  extra = '',
): string {
  return gatewayConfig({
    // One failed listing expires a node: the tests start from expired nodes.
    health: { interval: '100ms', timeout: '2s', failThreshold: 1 },
    discovery: { interval: '1h', timeout: LISTING_TIMEOUT, ...discovery },
    nodes: nodes.map((n) => ({ name: n.name, url: sim.url(n.name), kind: 'vllm', group: n.group })),
    extra,
  });
}

const listings = (name: string): Promise<number> => simCount(sim.url(name), '/v1/models');

async function listingsOf(names: readonly string[]): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const name of names) counts[name] = await listings(name);
  return counts;
}

before(async () => {
  sim = await startSimFleet(FLEET);
  await setSimFaults(sim.url('r'), { models: 'error500' });
  await setSimFaults(sim.url('z'), { models: 'error500' });
  await setSimFaults(sim.url('x'), { health: 'fail' });
  [waiting, notWaiting] = await Promise.all([
    startGateway(
      configText(
        [{ name: 's' }, { name: 'r' }, { name: 'w' }, { name: 'x' }, { name: 'grp', group: 'gx' }],
        { miss_wait: `${MISS_WAIT_MS}ms`, miss_cooldown: `${MISS_COOLDOWN_MS}ms` },
        '[[models.available]]\nname = "m-grp"\ngroup = "gx"',
      ),
      { clock },
    ),
    startGateway(configText([{ name: 'z' }], { miss_cooldown: '0s' })),
  ]);
  await waitForNode(waiting, 'r', modelState('expired'), 'expired');
  for (const name of ['s', 'w', 'grp']) await waitForNode(waiting, name, modelState('known'), 'known');
  await waitForNode(waiting, 'x', (d) => d.status === 'dead' && d.models.state === 'known', 'dead, with its list known');
  await waitForNode(notWaiting, 'z', modelState('expired'), 'expired');
  await setSimFaults(sim.url('r'), { models: 'none' });
  await setSimFaults(sim.url('z'), { models: 'none' });
});

after(async () => {
  await waiting?.close();
  await notWaiting?.close();
  await sim?.close();
});

test('a miss triggers a listing round on the nodes that could change the answer, and the request waits for it', async () => {
  const before_ = await listingsOf(['s', 'r', 'w', 'x', 'grp']);
  const res = await chat(waiting.url, 'm-r');
  assert.equal(res.status, 200, res.text);
  assert.equal(servedBy(res), 'r', 'served by the node the refresh found it on');
  const after_ = await listingsOf(['s', 'r', 'w', 'x', 'grp']);
  assert.deepEqual(
    Object.fromEntries(Object.entries(after_).map(([name, n]) => [name, n - (before_[name] ?? 0)])),
    // r was expired, s and w do not list m-r: each is listed once. x is dead and grp serves
    // another group: no listing of theirs could make them serve this request.
    { s: 1, r: 1, w: 1, x: 0, grp: 0 },
  );
  await waitForNode(waiting, 'r', modelState('known'), 'known');
});

test('refresh-on-miss is rate-limited per node by miss_cooldown', async () => {
  clock.jump(MISS_COOLDOWN_MS);
  const before_ = await listings('s');
  // Every listing is current (x is dead, not its listing): no-such-model is answered 404.
  for (let i = 0; i < 3; i++) assert.equal((await chat(waiting.url, 'no-such-model')).status, 404);
  assert.equal((await listings('s')) - before_, 1, 'one round within the cooldown, however many misses');
  clock.jump(MISS_COOLDOWN_MS);
  assert.equal((await chat(waiting.url, 'no-such-model')).status, 404);
  assert.equal((await listings('s')) - before_, 2, 'another round once the cooldown has passed');
});

test("a miss waits at most miss_wait, even when a node's listing hangs", async () => {
  await setSimFaults(sim.url('w'), { models: 'hang' });
  try {
    clock.jump(MISS_COOLDOWN_MS);
    const started = Date.now();
    const res = await chat(waiting.url, 'no-such-model');
    const elapsed = Date.now() - started;
    // The hung listing has not failed yet, so w's last listing is still current: 404.
    assert.equal(res.status, 404);
    assert.ok(elapsed >= MISS_WAIT_MS - 100, `waited ${elapsed} ms for the round`);
    // Generous for a busy machine, and still far below the 30 s the hung listing would take.
    assert.ok(elapsed < MISS_WAIT_MS + 5_000, `waited ${elapsed} ms, more than miss_wait`);
  } finally {
    await setSimFaults(sim.url('w'), { models: 'none' });
  }
});

test('with miss_wait 0 the request fails at once, and the round it triggered serves the next request', async () => {
  const before_ = await listings('z');
  const first = await chat(notWaiting.url, 'm-z');
  // z has never listed and its listing expired (fail_threshold 1): no node's last listing has m-z,
  // and the doubt a never-listed node leaves is over (issue 38 item 10), so it is unknown now. Had
  // it waited for the round it triggered, that round (which lists m-z) would have served it.
  assert.equal(first.status, 404, `did not wait: ${first.text}`);
  // Scheduled rounds are an hour apart: only the miss can have listed z again.
  const known = await waitForNode(notWaiting, 'z', modelState('known'), 'known after the refresh');
  assert.deepEqual(known.models.names, ['m-z']);
  assert.equal((await listings('z')) - before_, 1);
  assert.equal(servedBy(await chat(notWaiting.url, 'm-z')), 'z');
});
