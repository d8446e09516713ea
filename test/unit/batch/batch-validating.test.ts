// Issue 44: OpenAI's `validating` is a real state. POST /v1/batches answers the job `validating`
// (its input not read yet), and every GET says so until the runner has read the input and
// checked each line against the job (the endpoint of every line, each a request): then it is
// `in_progress` with its lines — or `failed` with each problem and its line number, having run
// nothing. A job cancelled while validating runs none of its lines; a restart mid-validation reads
// the input again. Over the real file, on a manual clock (the runner's tick is the test's).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '#src/core/clock.ts';
import { tempStateDir } from '#test/fixtures/state-dirs.ts';
import { chat, createJob, ok, startHarness } from './runner-harness.ts';

const embeddingLine = (customId: string): string =>
  JSON.stringify({ custom_id: customId, method: 'POST', url: '/v1/embeddings', body: { model: 'm', input: 'x' } });

test('a new job is validating (GET says so) until its input is checked; then in_progress with its lines, then completed', async () => {
  const t = tempStateDir();
  try {
    const h = startHarness(t.dir);
    const id = await createJob(h, [chat('a'), chat('b'), chat('c')]);
    const seen = h.api.batch('default', id) as { status: string; in_progress_at: number | null; request_counts: unknown };
    assert.equal(seen.status, 'validating');
    assert.equal(seen.in_progress_at, null);
    assert.deepEqual(seen.request_counts, { total: 0, completed: 0, failed: 0 });
    assert.equal(h.store.counts(id).waiting, 0, 'no line is kept before the input is checked');
    h.runner.start();
    await h.until(() => h.store.batch(id)?.status === 'in_progress', 'validated');
    const running = h.api.batch('default', id) as { in_progress_at: number | null; request_counts: unknown };
    assert.ok(running.in_progress_at !== null);
    assert.deepEqual(running.request_counts, { total: 3, completed: 0, failed: 0 });
    await h.until(() => h.held().length === 3, 'three sent');
    for (const held of h.held()) held.answer(ok());
    await h.until(() => h.store.batch(id)?.status === 'completed', 'completed');
    await h.stop();
  } finally {
    t.remove();
  }
});

test('a line whose url is not the job’s endpoint fails the job while validating: errors.data names the line; nothing runs', async () => {
  const t = tempStateDir();
  try {
    const h = startHarness(t.dir);
    const id = await createJob(h, [chat('a'), embeddingLine('b'), chat('c'), embeddingLine('d')]);
    assert.equal(h.store.batch(id)?.status, 'validating');
    h.runner.start();
    await h.until(() => h.store.batch(id)?.status === 'failed', 'failed');
    const failed = h.api.batch('default', id) as {
      failed_at: number | null;
      errors: { object: string; data: { code: string; line: number; message: string }[] };
    };
    assert.ok(failed.failed_at !== null);
    assert.equal(failed.errors.object, 'list');
    assert.deepEqual(
      failed.errors.data.map((e) => [e.code, e.line]),
      [
        ['mismatched_endpoint', 2],
        ['mismatched_endpoint', 4],
      ],
    );
    assert.equal(h.sent.length, 0, 'no line ran');
    assert.equal(h.store.counts(id).waiting, 0);
    await h.stop();
  } finally {
    t.remove();
  }
});

test('an input file deleted before it was checked fails the job naming it', async () => {
  const t = tempStateDir();
  try {
    const h = startHarness(t.dir);
    const id = await createJob(h, [chat('a')]);
    const input = h.store.batch(id)?.inputFileId ?? '';
    await h.api.deleteFile('default', input);
    h.runner.start();
    await h.until(() => h.store.batch(id)?.status === 'failed', 'failed');
    const errors = h.store.batch(id)?.errors ?? [];
    assert.equal(errors[0]?.code, 'input_file_unreadable');
    assert.match(errors[0]?.message ?? '', /deleted/);
    await h.stop();
  } finally {
    t.remove();
  }
});

test('cancelled while validating: it ends cancelled and runs none of its lines', async () => {
  const t = tempStateDir();
  try {
    const h = startHarness(t.dir);
    const id = await createJob(h, [chat('a'), chat('b')]);
    const cancelling = h.api.cancel('default', id) as { status: string };
    assert.equal(cancelling.status, 'cancelling');
    h.runner.start();
    await h.until(() => h.store.batch(id)?.status === 'cancelled', 'cancelled');
    for (let i = 0; i < 5; i++) await h.turn();
    assert.equal(h.sent.length, 0, 'no line ran');
    assert.deepEqual(h.store.counts(id), { waiting: 0, sent: 0, done: 0, failed: 0 });
    await h.stop();
  } finally {
    t.remove();
  }
});

test('a restart while validating checks the input again: the job runs once, each line once', async () => {
  const t = tempStateDir();
  const clock = new ManualClock();
  try {
    const first = startHarness(t.dir, { clock });
    const id = await createJob(first, [chat('a'), chat('b')]);
    first.crash();
    const second = startHarness(t.dir, { clock });
    assert.equal(second.store.batch(id)?.status, 'validating', 'kept validating across the restart');
    second.runner.start();
    await second.until(() => second.held().length === 2, 'both sent');
    for (const held of second.held()) held.answer(ok());
    await second.until(() => second.store.batch(id)?.status === 'completed', 'completed');
    assert.deepEqual(second.sent.map((s) => s.line.customId).sort(), ['a', 'b']);
    assert.equal(second.store.batch(id)?.retried, 0);
    await second.stop();
  } finally {
    t.remove();
  }
});
