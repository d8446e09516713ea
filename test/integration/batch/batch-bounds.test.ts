// Issue 44: the upload's bounds, each with a clear error — [batch] max_file_bytes (413 as it
// streams; nothing left on disk), max_lines, max_line_bytes (by line number) — and
// [batch] enabled = false (the API says it is off).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { APIError } from 'openai';
import { vllmNode } from '#test/fixtures/tenant-gateway.ts';
import { chatLine, startBatchGateway, upload, type BatchGateway } from './batch-fixture.ts';

let fleet: BatchGateway;

before(async () => {
  fleet = await startBatchGateway({
    fleet: vllmNode('one', ['m']),
    batch: 'max_file_bytes = "4KiB"\nmax_lines = 5\nmax_line_bytes = 300',
  });
});

after(async () => {
  await fleet?.close();
  fleet?.removeState();
});

async function refused(lines: readonly string[]): Promise<APIError> {
  try {
    await upload(fleet.client(), lines);
  } catch (error) {
    assert.ok(error instanceof APIError, String(error));
    return error;
  }
  assert.fail('the upload was taken');
}

test('a file past max_file_bytes is refused 413 as it streams, and nothing is left on disk', async () => {
  const error = await refused(
    Array.from({ length: 5 }, (_, i) => chatLine(`big${i}`, 'm', 'x'.repeat(200))).concat(['x'.repeat(4_000)]),
  );
  assert.equal(error.status, 413);
  assert.deepEqual(readdirSync(join(fleet.stateDir, 'batch-files')), [], 'no part file left');
});

test('more lines than max_lines, and a line past max_line_bytes, are refused naming the bound and the line', async () => {
  const many = await refused(Array.from({ length: 6 }, (_, i) => chatLine(`l${i}`, 'm', 'x')));
  assert.equal(many.status, 400);
  assert.match(many.message, /max_lines = 5/);
  const long = await refused([chatLine('a', 'm', 'x'), chatLine('b', 'm', 'y'.repeat(400))]);
  assert.equal(long.status, 400);
  assert.match(long.message, /line 2: longer than 300 bytes/);
  assert.equal((await upload(fleet.client(), [chatLine('a', 'm', 'fits')])).purpose, 'batch');
});

test('[batch] enabled = false: the API says it is turned off', async () => {
  const off = await startBatchGateway({ fleet: vllmNode('two', ['m']), batch: 'enabled = false' });
  try {
    await assert.rejects(
      () => upload(off.client(), [chatLine('a', 'm', 'x')]),
      (error: unknown) => error instanceof APIError && error.status === 503 && /enabled = false/.test(error.message),
    );
  } finally {
    await off.close();
    off.removeState();
  }
});
