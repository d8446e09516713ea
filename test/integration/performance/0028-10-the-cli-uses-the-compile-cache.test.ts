// Issue 28, fast CLI and lean process: every start stripped the types of every source again, and
// so loaded Node's TypeScript stripper (a WebAssembly module, ~18 MB of RSS kept for the process's
// life) and compiled everything anew. bin/switchyard.js now enables Node's compile cache (in
// os.tmpdir()/node-compile-cache unless NODE_COMPILE_CACHE says where), so a second start finds the
// stripped sources and their bytecode there. Checked by what lands in the cache, not by a timing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCliToExit } from '#test/fixtures/processes.ts';

/** Every file under `dir`, recursively (the cache keeps one subdirectory per Node version and flags). */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

// Node takes NODE_DISABLE_COMPILE_CACHE set to anything (even empty) as "off": a CI that sets it skips this one.
const disabledHere = process.env.NODE_DISABLE_COMPILE_CACHE !== undefined;

test(
  'switchyard --version writes the compile cache into the temp directory when nothing else names one',
  { timeout: 60_000, skip: disabledHere },
  async () => {
    const tmp = await mkdtemp(join(tmpdir(), 'switchyard-compile-cache-'));
    try {
      // NODE_COMPILE_CACHE empty: Node itself enables nothing, so whatever is cached the shim asked for.
      const run = await runCliToExit(['--version'], { env: { TMPDIR: tmp, NODE_COMPILE_CACHE: '' } });
      assert.equal(run.code, 0);
      assert.match(run.stdout, /^switchyard /);
      const cached = await filesUnder(join(tmp, 'node-compile-cache'));
      assert.ok(cached.length > 0, `the CLI's compiled sources were cached under ${tmp}/node-compile-cache`);
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  },
);

test('NODE_DISABLE_COMPILE_CACHE=1 leaves the cache off', { timeout: 60_000 }, async () => {
  const tmp = await mkdtemp(join(tmpdir(), 'switchyard-compile-cache-'));
  try {
    const run = await runCliToExit(['--version'], {
      env: { TMPDIR: tmp, NODE_COMPILE_CACHE: '', NODE_DISABLE_COMPILE_CACHE: '1' },
    });
    assert.equal(run.code, 0);
    assert.deepEqual(await filesUnder(join(tmp, 'node-compile-cache')), []);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
});
