// Issue 44: answers the runner could not keep (a commit that failed: another connection's write —
// a request worker's, a replica's — held past the busy timeout, or a full disk) are kept at a later
// tick, never dropped: the job completes with each line answered once and none sent again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tempStateDir } from '#test/fixtures/state-dirs.ts';
import { chat, createJob, ok, startHarness } from './runner-harness.ts';

test('answers whose commit failed are kept at a later tick; the job completes, no line sent again', async () => {
  const t = tempStateDir();
  const failing = { now: false, failed: 0 };
  const h = startHarness(t.dir, {
    faults: {
      beforeCommit: () => {
        if (!failing.now) return;
        failing.failed += 1;
        throw new Error('database is locked');
      },
    },
  });
  try {
    h.runner.start();
    const id = await createJob(h, [chat('a'), chat('b'), chat('c')]);
    await h.until(() => h.held().length === 3, 'every line sent');
    failing.now = true;
    for (const held of h.held()) held.answer(ok());
    await h.until(() => failing.failed >= 2, 'the keep failing, and tried again');
    assert.equal(h.store.counts(id).sent, 3, 'the lines stay sent while their answers wait');
    failing.now = false;
    await h.until(() => h.store.batch(id)?.status === 'completed', 'the job completes');
    assert.deepEqual(
      { completed: h.store.batch(id)?.completed, failed: h.store.batch(id)?.failed, retried: h.store.batch(id)?.retried },
      { completed: 3, failed: 0, retried: 0 },
    );
    assert.equal(h.sent.length, 3, 'no line sent again');
  } finally {
    await h.stop();
    t.remove();
  }
});
