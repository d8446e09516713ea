// Issue 21, item 11: `npm test` could hang forever. A gateway that missed its start window made the
// process fixture reject without killing it; after() had nothing to stop, the child kept the file's
// event loop alive and the file never exited (9 minutes seen). Now the fixture kills a child whose
// start fails, npm test's runner (scripts/test.ts) gives every file a hard wall-clock bound that
// kills it and what it started, and a process still alive after the run is named, killed and fails it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { gatewayToml, startGatewayProcess } from '#test/fixtures/processes.ts';
import { fileStartingASleeper, isAlive, runRunner } from '#test/fixtures/runner-runs.ts';

const PASSES = "import { test } from 'node:test';\ntest('passes', () => {});\n";

/** The runner's file bound here: long enough for the file that passes to load and pass on a busy 2-core machine (two suites at once). */
const FILE_BOUND_S = 20;

test('a test file kept alive by a child it never stops is killed at the file bound, with the child; the run goes on and fails', async () => {
  const run = await runRunner(
    {
      'hangs.test.ts': fileStartingASleeper("test('passes, but the sleeper keeps the file alive', () => {});"),
      'ok.test.ts': PASSES,
    },
    ['--file-bound', String(FILE_BOUND_S), '*.test.ts'],
  );
  assert.equal(run.code, 1, run.output);
  assert.match(
    run.output,
    new RegExp(
      `hard bound: \\S*hangs\\.test\\.ts was still running after ${FILE_BOUND_S} s; killed \\(SIGKILL\\) with the 1 process\\(es\\) it started`,
    ),
  );
  // node's own closing lines, as CI reads them.
  assert.match(run.output, /^ℹ tests \d+$/m);
  assert.match(run.output, /^ℹ pass [1-9]\d*$/m, 'the other file passed');
  assert.match(run.output, /^ℹ fail 1$/m);
  assert.ok(run.seconds < 120, `ended soon after the bound (${run.seconds.toFixed(1)} s)`);
  assert.equal(run.pids.length, 1);
  assert.equal(isAlive(run.pids[0] ?? 0), false, 'the child the file started was killed too');
});

test('a process a test leaves behind is named after the run, killed, and fails the run', async () => {
  const run = await runRunner(
    { 'leaks.test.ts': fileStartingASleeper("sleeper.unref();\ntest('passes and leaves its child running', () => {});") },
    ['*.test.ts'],
  );
  assert.equal(run.code, 1, run.output);
  assert.match(run.output, /^ℹ pass 1$/m);
  assert.match(run.output, /1 process\(es\) started by the tests were still running after the run; killed:\n\s+\d+ sleep 1000/);
  assert.equal(isAlive(run.pids[0] ?? 0), false);
});

/** Pids of this process's children whose command line includes `text` (Linux /proc). */
function childrenRunning(text: string): number[] {
  return readdirSync('/proc').flatMap((entry) => {
    if (!/^\d+$/.test(entry)) return [];
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
      const command = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      return ppid === process.pid && state !== 'Z' && command.includes(text) ? [Number(entry)] : [];
    } catch {
      return [];
    }
  });
}

test(
  'a gateway that misses its start window is killed before the fixture rejects',
  { skip: existsSync('/proc/self/stat') ? false : 'needs /proc' },
  async () => {
    // A 1 ms window: no gateway announces itself that fast.
    await assert.rejects(
      startGatewayProcess(gatewayToml([{ name: 'n', url: 'http://127.0.0.1:9', kind: 'vllm' }]), {}, 1),
      /no matching line within 1ms/,
    );
    assert.deepEqual(childrenRunning('switchyard.js\0serve'), [], 'no serve process of ours is left running');
  },
);
