// The request log file: appended to, rotated through PATH.1 … PATH.N (the oldest removed, or the
// file itself with keep = 0), and reopened at PATH after it was moved away.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileOutput } from '#src/logs/request-log-file.ts';

async function inDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-reqlog-file-'));
  try {
    await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const read = (path: string): Promise<string> => readFile(path, 'utf8');

test('an existing file is appended to, and its size counts toward the bound', async () => {
  await inDir(async (dir) => {
    const path = join(dir, 'r.log');
    await writeFile(path, 'old\n');
    const out = new FileOutput(path, { maxBytes: 10, keep: 1 });
    await out.open();
    assert.equal(out.size(), 4);
    assert.equal(out.full(6), false);
    assert.equal(out.full(7), true);
    await out.write('new\n');
    await out.close();
    assert.equal(await read(path), 'old\nnew\n');
  });
});

test('a new file is not readable by others (mode 0640 less the umask)', async () => {
  await inDir(async (dir) => {
    const path = join(dir, 'r.log');
    const out = new FileOutput(path, { maxBytes: 100, keep: 1 });
    await out.open();
    await out.close();
    assert.equal((await stat(path)).mode & 0o007, 0);
  });
});

test('rotation shifts PATH → PATH.1 → PATH.2 and removes the oldest', async () => {
  await inDir(async (dir) => {
    const path = join(dir, 'r.log');
    const out = new FileOutput(path, { maxBytes: 100, keep: 2 });
    for (const text of ['a\n', 'b\n', 'c\n', 'd\n']) {
      await out.write(text);
      await out.rotate();
    }
    await out.write('e\n');
    await out.close();
    assert.deepEqual((await readdir(dir)).sort(), ['r.log', 'r.log.1', 'r.log.2']);
    assert.deepEqual([await read(path), await read(`${path}.1`), await read(`${path}.2`)], ['e\n', 'd\n', 'c\n']);
    assert.equal(out.size(), 2);
  });
});

test('keep = 0: a full file is removed and started again', async () => {
  await inDir(async (dir) => {
    const path = join(dir, 'r.log');
    const out = new FileOutput(path, { maxBytes: 100, keep: 0 });
    await out.write('a\n');
    await out.rotate();
    await out.write('b\n');
    await out.close();
    assert.deepEqual(await readdir(dir), ['r.log']);
    assert.equal(await read(path), 'b\n');
  });
});

test('reopen after a move writes to a new PATH; the moved file keeps what it had', async () => {
  await inDir(async (dir) => {
    const path = join(dir, 'r.log');
    const out = new FileOutput(path, { maxBytes: 100, keep: 1 });
    await out.write('before\n');
    await rename(path, `${path}.moved`);
    await out.write('late\n');
    await out.reopen();
    await out.write('after\n');
    await out.close();
    assert.equal(await read(`${path}.moved`), 'before\nlate\n');
    assert.equal(await read(path), 'after\n');
  });
});

test('a path that cannot be opened fails open with the reason', async () => {
  await inDir(async (dir) => {
    const out = new FileOutput(join(dir, 'missing-dir', 'r.log'), { maxBytes: 100, keep: 1 });
    await assert.rejects(out.open(), /ENOENT/);
  });
});
