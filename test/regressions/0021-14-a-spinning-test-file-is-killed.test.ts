// Issue 21, item 14 (busy loop): a mutation that kept a site fresh forever made mesh-service.test.ts
// spin at 100 % CPU for 10 minutes. `--test-timeout` is a timer on the file's own event loop, which
// a spinning test never yields to. npm test's runner bounds every file from a watchdog thread: a
// file that spins is SIGKILLed at the bound (with the processes it started), reported as failed,
// and the other files still run and report.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileStartingASleeper, isAlive, runRunner } from '#test/fixtures/runner-runs.ts';

/** The runner's file bound here: long enough for the file that passes to load and pass on a busy 2-core machine (two suites at once). */
const FILE_BOUND_S = 20;

test("a test that spins forever is killed by the per-file hard bound; the run ends with node's closing lines", async () => {
  const run = await runRunner(
    {
      'spins.test.ts': fileStartingASleeper("test('spins forever', () => {\n  for (;;) {\n    // never yields\n  }\n});"),
      'ok.test.ts': "import { test } from 'node:test';\ntest('passes', () => {});\n",
    },
    ['--file-bound', String(FILE_BOUND_S), '--test-timeout', '2000', '*.test.ts'],
  );
  assert.equal(run.code, 1, run.output);
  assert.match(
    run.output,
    new RegExp(`hard bound: \\S*spins\\.test\\.ts was still running after ${FILE_BOUND_S} s; killed \\(SIGKILL\\)`),
  );
  assert.match(run.output, /✖ spins\.test\.ts/);
  assert.match(run.output, /✔ passes/);
  assert.match(run.output, /^ℹ tests 2$/m);
  assert.match(run.output, /^ℹ pass 1$/m);
  assert.match(run.output, /^ℹ fail 1$/m);
  assert.ok(run.seconds < 120, `ended soon after the bound (${run.seconds.toFixed(1)} s)`);
  assert.equal(isAlive(run.pids[0] ?? 0), false, 'what the spinning file started was killed too');
});
