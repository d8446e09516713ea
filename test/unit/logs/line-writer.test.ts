// The request log's writer over a scripted output: batches, a bounded queue while the output
// stalls (the rest dropped and counted), rotation before a batch that would overflow, and a
// reopen between two writes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LineWriter, type LineOutput } from '#src/logs/line-writer.ts';

class ScriptedOutput implements LineOutput {
  readonly ops: string[] = [];
  /** Text per file generation (rotate and reopen start a new one). */
  readonly files: string[] = [''];
  maxBytes = Number.POSITIVE_INFINITY;
  #stall: PromiseWithResolvers<void> | undefined;
  failNext = false;

  stall(): void {
    this.#stall = Promise.withResolvers<void>();
  }

  release(): void {
    this.#stall?.resolve();
    this.#stall = undefined;
  }

  async write(text: string): Promise<void> {
    if (this.#stall !== undefined) await this.#stall.promise;
    if (this.failNext) {
      this.failNext = false;
      throw new Error('disk full');
    }
    this.ops.push(`write ${text.split('\n').length - 1}`);
    this.files[this.files.length - 1] += text;
  }

  size(): number {
    return Buffer.byteLength(this.files.at(-1) ?? '');
  }

  full(bytes: number): boolean {
    return this.size() + bytes > this.maxBytes;
  }

  async rotate(): Promise<void> {
    this.ops.push('rotate');
    this.files.push('');
  }

  async reopen(): Promise<void> {
    this.ops.push('reopen');
    this.files.push('');
  }

  async close(): Promise<void> {
    this.ops.push('close');
  }
}

const unexpected = (error: unknown): void => assert.fail(`no write should fail: ${String(error)}`);
const lines = (from: number, count: number): string[] => Array.from({ length: count }, (_, i) => `{"n":${from + i}}\n`);

test('the lines of one tick go out in one write', async () => {
  const out = new ScriptedOutput();
  const writer = new LineWriter(out, 100, unexpected);
  for (const l of lines(0, 5)) writer.write(l);
  await writer.flushed();
  assert.deepEqual(out.ops, ['write 5']);
  assert.deepEqual(writer.figures(), { written: 5, dropped: 0, queued: 0 });
});

test('while the output stalls the queue holds its bound; the rest is dropped and counted, and nothing queued is lost', async () => {
  const out = new ScriptedOutput();
  out.stall();
  const writer = new LineWriter(out, 10, unexpected);
  writer.write(lines(0, 1)[0] ?? '');
  await new Promise((resolve) => setImmediate(resolve));
  // The first line is being written (stalled); ten more fit the queue, five do not.
  for (const l of lines(1, 15)) writer.write(l);
  assert.deepEqual(writer.figures(), { written: 0, dropped: 5, queued: 10 });
  out.release();
  await writer.flushed();
  assert.deepEqual(writer.figures(), { written: 11, dropped: 5, queued: 0 });
  assert.equal(out.files.join(''), lines(0, 11).join(''));
});

test('a batch that would take the file past its bound rotates it first', async () => {
  const out = new ScriptedOutput();
  out.maxBytes = 20;
  const writer = new LineWriter(out, 100, unexpected);
  for (const batch of [lines(0, 2), lines(2, 2), lines(4, 1)]) {
    for (const l of batch) writer.write(l);
    await writer.flushed();
  }
  assert.deepEqual(out.ops, ['write 2', 'rotate', 'write 2', 'rotate', 'write 1']);
  assert.equal(out.files.join(''), lines(0, 5).join(''));
});

test('a reopen runs between two writes and loses nothing queued', async () => {
  const out = new ScriptedOutput();
  const writer = new LineWriter(out, 100, unexpected);
  for (const l of lines(0, 3)) writer.write(l);
  const reopened = writer.reopen();
  for (const l of lines(3, 2)) writer.write(l);
  await reopened;
  await writer.flushed();
  assert.equal(out.ops[0], 'reopen');
  assert.equal(out.files.join(''), lines(0, 5).join(''));
});

test('a failed write drops its batch, is told once, and the next write goes through', async () => {
  const out = new ScriptedOutput();
  const told: unknown[] = [];
  const writer = new LineWriter(out, 100, (error) => told.push(error));
  out.failNext = true;
  for (const l of lines(0, 3)) writer.write(l);
  await writer.flushed();
  for (const l of lines(3, 2)) writer.write(l);
  await writer.flushed();
  assert.equal(told.length, 1);
  assert.deepEqual(writer.figures(), { written: 2, dropped: 3, queued: 0 });
});

test('close writes what is queued; later lines are dropped', async () => {
  const out = new ScriptedOutput();
  const writer = new LineWriter(out, 100, unexpected);
  for (const l of lines(0, 2)) writer.write(l);
  await writer.close();
  writer.write(lines(2, 1)[0] ?? '');
  assert.deepEqual(out.ops, ['write 2', 'close']);
  assert.deepEqual(writer.figures(), { written: 2, dropped: 1, queued: 0 });
});
