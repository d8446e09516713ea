// Issue 44: the batch runner over its real file, on a manual clock. A crash mid-job (the file
// closed with lines in flight) loses and doubles nothing: the next start sends again only the
// lines whose answers were never kept, marked retried, and every custom_id has one line in the
// output. A cancel stops new lines at once and ends `cancelled` once the lines in flight are
// answered; the completion window passing ends the job `expired` with its partial output. The
// pacing's room is never exceeded. A line no node ran (429 that says retry, 503) goes again; a
// 429 that says not to retry (a spent budget) is that line's error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '#src/core/clock.ts';
import { tempStateDir } from '#test/fixtures/state-dirs.ts';
import { chat, createJob, ok, startHarness, type Harness } from './runner-harness.ts';

interface Out {
  custom_id: string;
  response: { status_code: number; body: unknown } | null;
  error: { code: string } | null;
}

async function fileOf(h: Harness, id: string | null): Promise<Out[]> {
  if (id === null) return [];
  let text = '';
  for await (const chunk of h.files.read(id)) text += String(chunk);
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Out);
}

const ids = (n: number, prefix = 'c'): string[] => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

test('a crash with lines in flight: the next start sends again only the unkept ones, marked retried; nothing lost or doubled', async () => {
  const t = tempStateDir();
  const clock = new ManualClock();
  try {
    const first = startHarness(t.dir, { clock });
    const id = await createJob(
      first,
      ids(40).map((c) => chat(c)),
    );
    first.runner.start();
    // Three rounds answered and kept, then a round in flight when the process dies.
    for (let round = 0; round < 3; round++) {
      await first.until(() => first.held().length === 4, 'four lines in flight');
      for (const held of first.held()) held.answer(ok());
      await first.turn();
    }
    await first.until(() => first.held().length === 4, 'the last four in flight');
    // Two of the four are answered but the process dies before the answers are kept (within KEEP_MS).
    const [a, b] = first.held();
    a?.answer(ok());
    b?.answer(ok());
    await new Promise((resolve) => setImmediate(resolve));
    first.crash();
    const keptBefore = 12;
    const second = startHarness(t.dir, { clock, room: (_m, own, cap) => Math.min(cap, 40 - own) });
    const before = second.store.batch(id);
    assert.equal(before?.completed, keptBefore, 'the answers kept before the crash are there');
    second.runner.start();
    await second.until(() => second.held().length === 40 - keptBefore, 'every line not kept is sent again');
    const again = new Set(second.sent.map((h) => h.line.customId));
    const crashed = new Set(
      first
        .held()
        .map((h) => h.line.customId)
        .concat([a, b].map((h) => h?.line.customId ?? '')),
    );
    for (const held of second.sent) assert.equal(held.line.retried, crashed.has(held.line.customId), held.line.customId);
    const keptIds = first.sent.slice(0, keptBefore).map((h) => h.line.customId);
    for (const kept of keptIds) assert.ok(!again.has(kept), `${kept} was kept: never sent again`);
    for (const held of second.held()) held.answer(ok());
    await second.until(() => second.store.batch(id)?.status === 'completed', 'completed');
    const job = second.store.batch(id);
    assert.equal(job?.retried, 4, 'the four lines in flight at the crash are marked retried');
    assert.deepEqual([job?.total, job?.completed, job?.failed], [40, 40, 0]);
    const output = await fileOf(second, job?.outputFileId ?? null);
    assert.deepEqual(output.map((l) => l.custom_id).sort(), ids(40).sort(), 'one line per custom_id');
    await second.stop();
  } finally {
    t.remove();
  }
});

test('cancel: no new line is sent; the lines in flight finish; the job ends cancelled with the rest failed batch_cancelled', async () => {
  const t = tempStateDir();
  try {
    const h = startHarness(t.dir);
    const id = await createJob(
      h,
      ids(20).map((c) => chat(c)),
    );
    h.runner.start();
    await h.until(() => h.held().length === 4, 'four in flight');
    const cancelled = h.api.cancel('default', id);
    assert.ok(!(cancelled instanceof Error));
    assert.equal(cancelled.status, 'cancelling');
    await h.turn(500);
    assert.equal(h.sent.length, 4, 'nothing sent after the cancel');
    assert.equal(h.store.batch(id)?.status, 'cancelling', 'cancelling while lines are in flight');
    for (const held of h.held()) held.answer(ok());
    await h.until(() => h.store.batch(id)?.status === 'cancelled', 'cancelled');
    const job = h.store.batch(id);
    assert.deepEqual([job?.completed, job?.failed], [4, 16]);
    assert.ok(job?.cancelledMs !== null);
    assert.equal((await fileOf(h, job?.outputFileId ?? null)).length, 4);
    const errors = await fileOf(h, job?.errorFileId ?? null);
    assert.equal(errors.length, 16);
    assert.ok(errors.every((l) => l.error?.code === 'batch_cancelled' && l.response === null));
    assert.ok(h.api.cancel('default', id) instanceof Error, 'a cancelled job cannot be cancelled again');
    await h.stop();
  } finally {
    t.remove();
  }
});

test('the completion window passing: expired, with the partial output and the rest failed batch_expired', async () => {
  const t = tempStateDir();
  try {
    // Ticks a minute apart (answers still wake it at once): the hour passes in few ticks.
    const h = startHarness(t.dir, { room: (_m, own, cap) => Math.min(cap, Math.max(0, 2 - own)), settings: { tickMs: 60_000 } });
    const id = await createJob(
      h,
      ids(10).map((c) => chat(c)),
      'default',
      '1h',
    );
    h.runner.start();
    await h.until(() => h.held().length === 2, 'two in flight');
    for (const held of h.held()) held.answer(ok());
    await h.until(() => h.held().length === 2, 'the next two in flight');
    // The window passes with two lines in flight: nothing new is sent; those two finish.
    h.clock.advance(3_600_000);
    await h.turn();
    assert.equal(h.sent.length, 4);
    assert.equal(h.store.counts(id).waiting, 0, 'the waiting lines failed at once');
    for (const held of h.held()) held.answer(ok());
    await h.until(() => h.store.batch(id)?.status === 'expired', 'expired');
    const job = h.store.batch(id);
    assert.deepEqual([job?.total, job?.completed, job?.failed], [10, 4, 6]);
    assert.equal((await fileOf(h, job?.outputFileId ?? null)).length, 4);
    assert.ok((await fileOf(h, job?.errorFileId ?? null)).every((l) => l.error?.code === 'batch_expired'));
    await h.stop();
  } finally {
    t.remove();
  }
});

test('the pacing’s room is never exceeded, per model; no room, nothing sent', async () => {
  const t = tempStateDir();
  try {
    const open = { room: 0 };
    const h = startHarness(t.dir, { room: (_m, own, cap) => Math.min(cap, Math.max(0, open.room - own)) });
    await createJob(h, [...ids(6, 'a').map((c) => chat(c, 'a')), ...ids(6, 'b').map((c) => chat(c, 'b'))]);
    h.runner.start();
    await h.turn(500);
    assert.equal(h.sent.length, 0, 'no room: nothing sent');
    open.room = 3;
    await h.until(() => h.held().length === 6, 'three of each model');
    await h.turn(500);
    assert.deepEqual(
      ['a', 'b'].map((m) => h.held().filter((x) => x.line.model === m).length),
      [3, 3],
    );
    for (const held of h.held()) held.answer(ok());
    await h.stop();
  } finally {
    t.remove();
  }
});

test('a line no node ran goes again; a 429 that says not to retry, and any other error answer, is kept in the error file', async () => {
  const t = tempStateDir();
  try {
    const h = startHarness(t.dir);
    const id = await createJob(
      h,
      ids(4).map((c) => chat(c)),
    );
    h.runner.start();
    await h.until(() => h.held().length === 4, 'four in flight');
    const [queueFull, spent, scope, fine] = h.held();
    queueFull?.answer({ kind: 'answer', status: 429, headers: { 'retry-after-ms': '2000' }, body: '{}', requestId: 'q' });
    spent?.answer({
      kind: 'answer',
      status: 429,
      headers: { 'x-should-retry': 'false' },
      body: '{"error":{"code":"rate_limit_exceeded"}}',
      requestId: 's',
    });
    scope?.answer({ kind: 'answer', status: 404, headers: {}, body: '{"error":{"code":"model_not_found"}}', requestId: 'n' });
    fine?.answer(ok());
    await h.turn();
    await h.turn(1_000);
    assert.equal(h.sent.length, 4, 'the refused line waits its Retry-After');
    await h.until(() => h.held().length === 1, 'sent again after it');
    assert.equal(h.held()[0]?.line.customId, queueFull?.line.customId);
    assert.equal(h.held()[0]?.line.retried, false, 'no node ran it: not a retry');
    h.held()[0]?.answer(ok());
    await h.until(() => h.store.batch(id)?.status === 'completed', 'completed');
    const job = h.store.batch(id);
    assert.deepEqual([job?.completed, job?.failed], [2, 2]);
    const errors = await fileOf(h, job?.errorFileId ?? null);
    assert.deepEqual(
      errors.map((l) => [l.custom_id, l.response?.status_code]).sort(),
      [
        [scope?.line.customId, 404],
        [spent?.line.customId, 429],
      ].sort(),
    );
    await h.stop();
  } finally {
    t.remove();
  }
});

test('files and finished jobs are deleted after [batch] retention; a running job’s lines are not', async () => {
  const t = tempStateDir();
  try {
    const h = startHarness(t.dir, { settings: { retentionMs: 3_600_000, tickMs: 60_000 } });
    const id = await createJob(
      h,
      ids(2).map((c) => chat(c)),
    );
    h.runner.start();
    await h.until(() => h.held().length === 2, 'two in flight');
    for (const held of h.held()) held.answer(ok());
    await h.until(() => h.store.batch(id)?.status === 'completed', 'completed');
    const output = h.store.batch(id)?.outputFileId ?? '';
    assert.ok(h.store.file(output, 'default'));
    const running = await createJob(
      h,
      ids(3, 'r').map((c) => chat(c)),
    );
    // Its input checked (it is `validating` until then: a job's lines are kept once they are).
    await h.until(() => h.store.batch(running)?.status === 'in_progress', 'the running job validated');
    h.clock.advance(3_600_000 + 60_000);
    await h.turn();
    await h.until(() => h.store.batch(id) === undefined, 'the finished job forgotten');
    assert.equal(h.store.file(output, 'default'), undefined, 'its output file deleted');
    assert.equal(h.store.batch(running)?.status, 'in_progress', 'the running job stays');
    assert.equal(h.store.counts(running).waiting + h.store.counts(running).sent, 3);
    for (const held of h.held()) held.answer(ok());
    await h.stop();
  } finally {
    t.remove();
  }
});
