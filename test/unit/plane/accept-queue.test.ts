// The accept-queue warning: the listener asks `[server] listen_backlog`, Linux gives at most
// net.core.somaxconn; a shorter queue is said at start (table), and the cap is read from its proc
// file (test/integration/proxy/accept-queue-warning.test.ts: the warning of a started gateway).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acceptQueueCapped, readSomaxconn } from '#src/plane/accept-queue.ts';

test('capped only when the kernel gives less than the listener asks', () => {
  const table: [number, number | undefined, boolean][] = [
    // listen_backlog, somaxconn, warned
    [4096, 4096, false],
    [4096, 65535, false],
    [16384, 4096, true],
    [512, 128, true],
    [16384, undefined, false],
    [16384, 0, false],
    [16384, Number.NaN, false],
  ];
  for (const [backlog, cap, warned] of table) {
    const got = acceptQueueCapped(backlog, cap);
    assert.equal(got !== undefined, warned, `${backlog} vs ${cap}`);
    if (got !== undefined) assert.deepEqual(got, { listen_backlog: backlog, somaxconn: cap });
  }
});

test('the cap is read from its proc file; none where the file is missing or not a number', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'somaxconn-'));
  try {
    await writeFile(join(dir, 'ok'), '4096\n');
    await writeFile(join(dir, 'bad'), 'many\n');
    assert.equal(readSomaxconn(join(dir, 'ok')), 4096);
    assert.equal(readSomaxconn(join(dir, 'bad')), undefined);
    assert.equal(readSomaxconn(join(dir, 'absent')), undefined);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
