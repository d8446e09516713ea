// The simulated router's own queue at models_max (docs/protocols.md §7.z5, from llama.cpp's
// `server_lru_sched` and `ensure_model_ready` at 3f545bec): FIFO per model with waiters merged, an
// idle model evicted on arrival and a busy one never, a model's last request ending giving its slot
// up; the stall two queued models reach when both count on one victim still exiting; and the older
// builds (10312 refuses, older evicts a busy model). All on a manual clock: no wall time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '#src/core/clock.ts';
import { ResidentModels } from '#src/sim/resident-models.ts';
import { RouterQueue, routerFullBehaviour } from '#src/sim/router-queue.ts';
import { resolveNodeSpec, type SimModelSpec } from '#src/sim/spec.ts';

const LOAD_MS = 100;

function router(
  models: readonly SimModelSpec[],
  extra: { readonly unloadTimeMs?: number; readonly version?: string } = {},
): { clock: ManualClock; residents: ResidentModels } {
  const clock = new ManualClock();
  const node = resolveNodeSpec({ kind: 'llamacpp-router', modelsMax: 1, loadTimeMs: LOAD_MS, models, ...extra });
  return { clock, residents: new ResidentModels(node, clock) };
}

/** Lets every promise settled by the last clock step run its continuation. */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

/** One request as the router's POST handler runs it: its load (maybe queued), then its answer until `finish()`. */
function request(residents: ResidentModels, model: string, log: string[]): { finish: () => void; done: Promise<string> } {
  let finish = (): void => {};
  const ended = new Promise<void>((resolve) => (finish = resolve));
  const controller = new AbortController();
  const done = (async () => {
    const load = residents.status(model) === 'unloaded' ? await residents.loadForRequest(model, controller.signal) : 'go';
    if (load !== 'go') return load;
    const status = await residents.settled(model, controller.signal);
    if (status !== 'loaded') return `failed (${status})`;
    log.push(model);
    const end = residents.beginRequest(model);
    await ended;
    end();
    return 'answered';
  })();
  return { finish: () => finish(), done };
}

test('the pure queue: one entry per model, the front loads only with room, a started load drops its entry', () => {
  const queue = new RouterQueue();
  queue.join('b');
  queue.join('c');
  queue.join('b');
  assert.deepEqual(queue.models(), ['b', 'c'], 'the second b joined its entry');
  assert.equal(queue.tryClaim('c', true), false, 'not the front');
  assert.equal(queue.tryClaim('b', false), false, 'no room');
  assert.equal(queue.tryClaim('b', true), true);
  assert.equal(queue.tryClaim('b', true), false, 'someone loads it already');
  queue.claimDone('b', false);
  assert.equal(queue.tryClaim('b', true), true, 'a load that did not go through stays in line');
  queue.claimDone('b', true);
  assert.deepEqual(queue.models(), ['c']);
  queue.leave('c');
  assert.equal(queue.empty(), true, 'its last waiter left');
});

test('the pure queue: an idle model gives its slot up only when a queued entry needs one and does not want it', () => {
  const queue = new RouterQueue();
  assert.equal(queue.givesUpSlot('a', 1, 1, true), false, 'nothing queued');
  queue.join('b');
  assert.equal(queue.givesUpSlot('a', 1, 1, false), false, 'not idle and ready');
  assert.equal(queue.givesUpSlot('b', 1, 1, true), false, 'the queue wants this very model');
  assert.equal(queue.givesUpSlot('a', 0, 1, true), false, 'a slot is free already');
  assert.equal(queue.givesUpSlot('a', 1, 1, true), true);
  assert.equal(queue.givesUpSlot('c', 1, 1, true), false, 'b has its slot coming: nothing else needs one');
  assert.equal(queue.givesUpSlot('a', 1, 0, true), false, 'unlimited: nothing ever queues');
});

test('builds: 10313 on queue, 10312 refuses, older evict; an unreadable build_info is taken as current', () => {
  assert.equal(routerFullBehaviour('b10587-3f545bec'), 'queue');
  assert.equal(routerFullBehaviour('b10313-dff15d4a'), 'queue');
  assert.equal(routerFullBehaviour('b10312-e1470ee6'), 'refuse');
  assert.equal(routerFullBehaviour('b9000-abc'), 'evict');
  assert.equal(routerFullBehaviour(undefined), 'queue');
  assert.equal(routerFullBehaviour('custom'), 'queue');
});

test('a busy model is never evicted: the others queue FIFO by model, merged, and each gets the slot when the one before goes idle', async () => {
  const { clock, residents } = router([
    { id: 'a', status: 'loaded' },
    { id: 'b', status: 'unloaded' },
    { id: 'c', status: 'unloaded' },
  ]);
  const log: string[] = [];
  const a = request(residents, 'a', log);
  await settle();
  const b1 = request(residents, 'b', log);
  const c1 = request(residents, 'c', log);
  const b2 = request(residents, 'b', log);
  await settle();
  assert.deepEqual(residents.stats().queued, ['b', 'c'], 'one entry per model, in arrival order');
  assert.equal(residents.status('a'), 'loaded', 'the busy model is kept');
  clock.advance(1_000);
  await settle();
  assert.deepEqual(residents.stats().queued, ['b', 'c'], 'no bound: they wait as long as a is busy');
  a.finish();
  await a.done;
  await settle();
  assert.equal(residents.status('b'), 'loading', 'a went idle and gave its slot to the front entry');
  clock.advance(LOAD_MS);
  await settle();
  assert.deepEqual(log, ['a', 'b', 'b'], 'both b requests follow the one load');
  assert.equal(residents.status('c'), 'unloaded');
  b1.finish();
  await settle();
  assert.equal(residents.status('c'), 'unloaded', 'b still has a request: c waits');
  b2.finish();
  await settle();
  clock.advance(LOAD_MS);
  await settle();
  assert.deepEqual(log, ['a', 'b', 'b', 'c']);
  c1.finish();
  assert.deepEqual(await Promise.all([b1.done, b2.done, c1.done]), ['answered', 'answered', 'answered']);
  const stats = residents.stats();
  assert.equal(stats.peakRunning, 1);
  assert.equal(stats.loads, 2, 'one load per model');
  assert.equal(stats.unloadsMidRequest, 0);
  residents.close();
});

test('an idle model is evicted on arrival; a request for a loaded model skips the queue', async () => {
  const { clock, residents } = router([
    { id: 'a', status: 'loaded' },
    { id: 'b', status: 'unloaded' },
  ]);
  const log: string[] = [];
  const b = request(residents, 'b', log);
  await settle();
  assert.equal(residents.status('a'), 'unloaded');
  assert.equal(residents.status('b'), 'loading');
  clock.advance(LOAD_MS);
  await settle();
  const again = request(residents, 'b', log);
  await settle();
  assert.deepEqual(log, ['b', 'b']);
  b.finish();
  again.finish();
  assert.deepEqual(await Promise.all([b.done, again.done]), ['answered', 'answered']);
  residents.close();
});

test('two models queued while one victim exits both count on it: the second waits past the first going idle, until a new request', async () => {
  const { clock, residents } = router(
    [
      { id: 'c', status: 'loaded' },
      { id: 'b', status: 'unloaded' },
      { id: 'a', status: 'unloaded' },
    ],
    { unloadTimeMs: 50 },
  );
  const log: string[] = [];
  const b = request(residents, 'b', log);
  const a = request(residents, 'a', log);
  await settle();
  assert.deepEqual(residents.stats().queued, ['b', 'a']);
  clock.advance(50);
  await settle();
  assert.equal(residents.status('c'), 'unloaded', 'the victim exited');
  clock.advance(LOAD_MS);
  await settle();
  assert.deepEqual(log, ['b']);
  b.finish();
  await b.done;
  await settle();
  clock.advance(10_000);
  await settle();
  assert.equal(residents.status('b'), 'loaded', 'b idle and kept: the queue is not given its slot');
  assert.deepEqual(residents.stats().queued, ['a'], 'a still waits (PROTOCOLS §7.y saw this on b10587)');
  const a2 = request(residents, 'a', log);
  await settle();
  clock.advance(50);
  await settle();
  clock.advance(LOAD_MS);
  await settle();
  assert.deepEqual(log, ['b', 'a', 'a'], 'a new request picked b as the victim and both a requests follow');
  a.finish();
  a2.finish();
  assert.deepEqual(await Promise.all([a.done, a2.done]), ['answered', 'answered']);
  residents.close();
});

test('with the victim gone at once the same burst is handed over when b goes idle', async () => {
  const { clock, residents } = router([
    { id: 'c', status: 'loaded' },
    { id: 'b', status: 'unloaded' },
    { id: 'a', status: 'unloaded' },
  ]);
  const log: string[] = [];
  const b = request(residents, 'b', log);
  const a = request(residents, 'a', log);
  await settle();
  clock.advance(LOAD_MS);
  await settle();
  b.finish();
  await b.done;
  await settle();
  clock.advance(LOAD_MS);
  await settle();
  assert.deepEqual(log, ['b', 'a']);
  a.finish();
  assert.equal(await a.done, 'answered');
  residents.close();
});

test('build 10312 refuses a load with no idle model; an older build evicts the busy one', async () => {
  const models: SimModelSpec[] = [
    { id: 'a', status: 'loaded' },
    { id: 'b', status: 'unloaded' },
  ];
  const refusing = router(models, { version: 'b10312-e1470ee6' });
  const busy = request(refusing.residents, 'a', []);
  await settle();
  assert.equal(await request(refusing.residents, 'b', []).done, 'limit_reached');
  busy.finish();
  await busy.done;
  refusing.residents.close();
  const evicting = router(models, { version: 'b10000-abc' });
  const cut = request(evicting.residents, 'a', []);
  await settle();
  void request(evicting.residents, 'b', []);
  await settle();
  assert.equal(evicting.residents.status('a'), 'unloaded');
  assert.equal(evicting.residents.stats().unloadsMidRequest, 1);
  cut.finish();
  evicting.residents.close();
});
