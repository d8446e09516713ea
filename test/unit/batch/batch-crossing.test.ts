// Issue 44 with [server] workers > 1 (batch-crossing.ts, batch-worker-side.ts): a request worker
// answers the Files and Batch API over its own connection to the owner's batch file. It answers
// 503 until the owner says its feature runs; then it reads what the owner wrote, and a job it
// creates is the owner runner's (the runner is woken through the crossing); a cancel it makes
// stops new lines at once. It joins the file without the owner's exclusive check (so it never holds
// the owner's writes), and a file the owner has not migrated yet is a 503 naming it, said once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { GatewayError } from '#src/core/errors.ts';
import type { GatewayConfig } from '#src/config/index.ts';
import type { BatchApi } from '#src/batch/batch-api.ts';
import { batchOwnerSide, type BatchWorkerMessage } from '#src/batch/batch-crossing.ts';
import { BATCH_FILE_NAME } from '#src/batch/batch-db.ts';
import type { BatchPort } from '#src/batch/batch-port.ts';
import { batchWorkerSide } from '#src/batch/batch-worker-side.ts';
import { ManualClock } from '#src/core/clock.ts';
import { tempStateDir } from '#test/fixtures/state-dirs.ts';
import { chat, ok, startHarness } from './runner-harness.ts';

const configOf = (stateDir: string): GatewayConfig => ({ server: { stateDir }, batch: undefined }) as unknown as GatewayConfig;

function served(port: BatchPort): BatchApi {
  const api = port.served();
  if (api instanceof GatewayError) throw api;
  return api;
}

test('a worker answers over the owner’s file once it runs; its job is the owner runner’s; its cancel stops new lines at once', async () => {
  const t = tempStateDir();
  const h = startHarness(t.dir, { shared: true });
  try {
    const running = { now: false };
    const seen = { pokes: 0, logs: [] as string[] };
    const owner = batchOwnerSide({
      secret: 'the-secret',
      places: { recordsDir: t.dir, filesDir: join(t.dir, 'files'), sharedDir: false },
      running: () => running.now,
      poke: () => {
        seen.pokes += 1;
        h.runner.poke();
      },
      log: (_level, _fields, message) => void seen.logs.push(message),
    });
    const link = owner.link(
      () => assert.fail('the owner sends a worker nothing but its changes'),
      (error) => assert.fail(String(error)),
    );
    const side = batchWorkerSide(owner.init(), {
      config: () => configOf(t.dir),
      clock: h.clock,
      send: (message: BatchWorkerMessage) => link.receive(message),
    });
    const port = side.port?.[1] as BatchPort;
    assert.equal(port.secret, 'the-secret');
    const early = port.served();
    assert.ok(early instanceof GatewayError && early.status === 503, 'not before the owner runs');

    h.runner.start();
    running.now = true;
    const changes = owner.changes?.() ?? [];
    assert.deepEqual(changes, [{ t: 'running', running: true }]);
    assert.deepEqual(owner.changes?.(), [], 'said once');
    for (const message of changes) side.receive(message);
    const api = served(port);

    // A file the owner's thread wrote is the worker's to read.
    const lines = Array.from({ length: 10 }, (_, i) => chat(`c${i}`));
    const { bytes } = await h.files.write('file-in', lines);
    h.store.addFile({
      id: 'file-in',
      tenant: 'default',
      purpose: 'batch',
      filename: 'in.jsonl',
      bytes,
      lines: lines.length,
      createdMs: h.clock.now(),
      expiresMs: h.clock.now() + 86_400_000,
    });
    assert.equal((api.file('default', 'file-in') as { id: string }).id, 'file-in');

    // A job created through the worker: the owner's runner is woken and sends its lines.
    const created = await api.createBatch('default', { input_file_id: 'file-in', endpoint: '/v1/chat/completions' });
    assert.ok(!(created instanceof GatewayError), String(created));
    const id = String(created.id);
    assert.equal(seen.pokes, 1, 'the creation crossed to the owner');
    await h.until(() => h.held().length === 4, 'the owner’s runner sends the worker’s job');
    const job = port.job(id);
    assert.equal(job?.tenant, 'default', 'the line route reads the job from the file');
    assert.equal(job?.endpoint, '/v1/chat/completions');

    // A cancel through the worker: the waiting lines fail in its own transaction; the owner's runner takes none after.
    const cancelled = api.cancel('default', id) as { status: string; request_counts: { failed: number } };
    assert.equal(cancelled.status, 'cancelling');
    assert.equal(cancelled.request_counts.failed, 6);
    assert.equal(seen.pokes, 2);
    for (const held of h.held()) held.answer(ok());
    await h.until(() => h.store.batch(id)?.status === 'cancelled', 'the job ends cancelled');
    assert.equal(h.sent.length, 4, 'no line sent after the cancel');
    assert.deepEqual(seen.logs, []);

    // The worker drained: its connection is closed and stays so.
    side.close?.();
    const closed = port.served();
    assert.ok(closed instanceof GatewayError && closed.status === 503);
    assert.equal(port.job(id), undefined);
  } finally {
    await h.stop();
    t.remove();
  }
});

test('a worker joins without the exclusive check; a file the owner has not migrated is a 503 naming it, said once', async () => {
  const t = tempStateDir();
  const logs: string[] = [];
  const side = batchWorkerSide(
    { secret: 's', places: { recordsDir: t.dir, filesDir: join(t.dir, 'files'), sharedDir: false }, running: true },
    {
      config: () => configOf(t.dir),
      clock: new ManualClock(),
      send: (message) => void (message.t === 'log' && logs.push(message.message)),
    },
  );
  const port = side.port?.[1] as BatchPort;
  try {
    for (let i = 0; i < 3; i++) {
      const early = port.served();
      assert.ok(early instanceof GatewayError && early.status === 503, String(early));
      assert.match(early.message, new RegExp(`${BATCH_FILE_NAME}.*schema version 0`));
    }
    assert.equal(logs.length, 1, 'said once');
    const h = startHarness(t.dir, { shared: true });
    // Another connection holds the write lock: joining still succeeds at once (an exclusive check would wait, then fail).
    const holder = new DatabaseSync(join(t.dir, BATCH_FILE_NAME));
    holder.exec('BEGIN IMMEDIATE');
    try {
      const api = served(port);
      assert.deepEqual((api.listFiles('default', new URLSearchParams()) as { data: unknown[] }).data, []);
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
      side.close?.();
      await h.stop();
    }
  } finally {
    t.remove();
  }
});
