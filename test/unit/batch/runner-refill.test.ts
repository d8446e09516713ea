// Issue 44, "as fast as the fleet allows when it is idle": a slot one of the runner's lines frees
// is filled again at once — the answer starts the next line — not on a timer. On a manual clock
// that never moves (turn(0): only what is due now runs), with a pacing of four slots, the runner's
// lines in flight return to the four slots after every answer, and the whole job runs that way:
// the time-weighted count of lines in flight is the slots, counted per answer, not timed. And an
// answer costs no scan of the whole job (its counts, its models: the tick's, on its timer), so a
// large job does not hold the event loop every request shares at every answer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tempStateDir } from '#test/fixtures/state-dirs.ts';
import { chat, createJob, ok, startHarness } from './runner-harness.ts';

const SLOTS = 4;

test('an answer starts the next line at once: the runner keeps every slot busy while lines wait', async () => {
  const t = tempStateDir();
  const h = startHarness(t.dir, { room: (_m, own, cap) => Math.min(cap, Math.max(0, SLOTS - own)) });
  try {
    const lines = 24;
    const id = await createJob(
      h,
      Array.from({ length: lines }, (_, i) => chat(`c${i}`)),
    );
    h.runner.start();
    await h.until(() => h.held().length === SLOTS, 'the four slots filled');
    const startedAt = h.clock.now();
    // The job-wide scans (its counts, its waiting models) are the tick's, on its timer: an answer reads only the lines it takes.
    const scans = { counts: 0, pending: 0, waitingModels: 0 };
    const { store } = h;
    const counts = store.counts.bind(store);
    const pending = store.pending.bind(store);
    const waitingModels = store.waitingModels.bind(store);
    store.counts = (batchId) => (scans.counts++, counts(batchId));
    store.pending = (batchId) => (scans.pending++, pending(batchId));
    store.waitingModels = (batchId) => (scans.waitingModels++, waitingModels(batchId));
    // One answer at a time, the clock standing still: each freed slot is filled before the next answer.
    const inFlightAfter: number[] = [];
    for (let answered = 0; answered < lines - SLOTS; answered++) {
      h.held()[0]?.answer(ok());
      await new Promise((resolve) => setImmediate(resolve));
      await h.turn(0);
      inFlightAfter.push(h.held().length);
    }
    assert.equal(h.clock.now(), startedAt, 'no time passed');
    assert.deepEqual(scans, { counts: 0, pending: 0, waitingModels: 0 }, 'no scan of the whole job per answer');
    assert.deepEqual(
      inFlightAfter,
      inFlightAfter.map(() => SLOTS),
      'after every answer the runner’s lines in flight are back at the slots',
    );
    for (const held of h.held()) held.answer(ok());
    await h.until(() => h.store.batch(id)?.status === 'completed', 'completed');
    assert.deepEqual([h.store.batch(id)?.completed, h.sent.length], [lines, lines], 'each line once');
  } finally {
    // Whatever failed, no line is left held: stop waits for the lines in flight.
    for (const held of h.held()) held.answer(ok());
    await h.stop();
    t.remove();
  }
});
