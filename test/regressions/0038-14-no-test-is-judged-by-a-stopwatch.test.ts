// Issue 38, item 14: the suite was flaky on a loaded machine (two clean-clone CI runs at load ~10:
// one failed, in 0010-02, which raced a 500-node start-up to send its SIGHUP). Tests that judge by
// a stopwatch fail when the machine is busy, not when the code is wrong. The fixes: the start-up
// is held by an event (test/fixtures/hold-listen.ts), and claims once judged by a tight elapsed-time
// bound are judged by what the client got, by counts (asks for a lease, requests a node saw) or by
// state (a free key), with any remaining upper bound a generous one.
//
// This keeps it so: no `assert.ok` in a test file bounds an elapsed time (Date.now() or
// performance.now() differences, tookMs, elapsed) from above by a literal under 20 s.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const ROOT = new URL('../..', import.meta.url).pathname;
/** Below this, an upper bound on elapsed time measures the machine's load, not the code (a 2-core machine at load 20 delays a timer by seconds). */
const MIN_UPPER_BOUND_MS = 20_000;
const ELAPSED = /Date\.now\(\)\s*-|performance\.now\(\)\s*-|\btookMs\b|\belapsed\w*\b/;
const UPPER_BOUND = /<=?\s*([0-9][0-9_]*)\b(?!\s*[*/])/g;

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : testFiles(path);
    return entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

/** Each `assert.ok(...)` line that bounds an elapsed time from above by a literal under the floor. */
function stopwatchJudgements(text: string): { line: number; text: string; boundMs: number }[] {
  return text.split('\n').flatMap((line, index) => {
    if (!/^\s*assert\.ok\(/.test(line) || !ELAPSED.test(line)) return [];
    const bounds = [...line.matchAll(UPPER_BOUND)].map((m) => Number((m[1] ?? '').replaceAll('_', '')));
    return bounds.filter((b) => b < MIN_UPPER_BOUND_MS).map((boundMs) => ({ line: index + 1, text: line.trim(), boundMs }));
  });
}

test('the rule finds a stopwatch judgement and lets a generous bound or a lower bound through', () => {
  assert.equal(stopwatchJudgements('  assert.ok(performance.now() - started < 1000);').length, 1);
  assert.equal(stopwatchJudgements("  assert.ok(Date.now() - started < 8_000, 'closed');").length, 1);
  assert.equal(stopwatchJudgements("  assert.ok(elapsed < 1_500, 'x');").length, 1);
  assert.equal(stopwatchJudgements("  assert.ok(Date.now() - started < 60_000, 'a bound');").length, 0);
  assert.equal(stopwatchJudgements("  assert.ok(tookMs >= 900, 'waited');").length, 0);
  assert.equal(stopwatchJudgements("  assert.ok(count < 3, 'not a time');").length, 0);
});

test('no test file judges by a stopwatch', () => {
  const found = testFiles(join(ROOT, 'test')).flatMap((file) =>
    stopwatchJudgements(readFileSync(file, 'utf8')).map((j) => `${relative(ROOT, file)}:${j.line}: ${j.text}`),
  );
  assert.deepEqual(
    found,
    [],
    `judge by an event, a count or a state; a remaining upper bound on elapsed time is at least ${MIN_UPPER_BOUND_MS} ms:\n${found.join('\n')}`,
  );
});
