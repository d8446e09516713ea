// Preloaded (`node --import`) by scripts/test.ts into node's test runner, which passes it on to the
// process of every test file. In a test file's process (NODE_TEST_CONTEXT is set there) it starts a
// watchdog thread: when the file has run for SWITCHYARD_TEST_FILE_BOUND_MS, the thread says so on
// stderr, SIGKILLs every process the file started (children, their children) and then the file's
// own process. The runner then reports the file as failed and goes on with the next one.
//
// `--test-timeout` is a timer on the file's own event loop: a test that spins (a busy loop, a
// synchronous wait) never lets it fire. A worker thread has its own event loop and runs while the
// main thread spins, and SIGKILL cannot be caught. The thread is unref'd: it never keeps a file alive.

import { Worker } from 'node:worker_threads';

export const FILE_BOUND_ENV = 'SWITCHYARD_TEST_FILE_BOUND_MS';

// CommonJS, run by the worker thread. Linux lists processes in /proc; elsewhere only the file's own
// process is killed here (the runner kills its whole process group when the run ends).
const WATCHDOG = `
const { workerData } = require('node:worker_threads');
const { readdirSync, readFileSync, writeSync } = require('node:fs');
function descendants(root) {
  const byParent = new Map();
  let entries = [];
  try { entries = readdirSync('/proc'); } catch { return []; }
  for (const entry of entries) {
    if (!/^[0-9]+$/.test(entry)) continue;
    try {
      const stat = readFileSync('/proc/' + entry + '/stat', 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      byParent.set(ppid, [...(byParent.get(ppid) ?? []), Number(entry)]);
    } catch {}
  }
  const found = [];
  for (let i = 0, next = [root]; next.length > 0; i += 1) {
    const pid = next.shift();
    for (const child of byParent.get(pid) ?? []) { found.push(child); next.push(child); }
  }
  return found;
}
setTimeout(() => {
  const { pid, file, boundMs } = workerData;
  const others = descendants(pid);
  writeSync(2, 'hard bound: ' + file + ' was still running after ' + boundMs / 1000 + ' s; killed (SIGKILL)' +
    (others.length > 0 ? ' with the ' + others.length + ' process(es) it started' : '') + '\\n');
  for (const other of others) { try { process.kill(other, 'SIGKILL'); } catch {} }
  process.kill(pid, 'SIGKILL');
}, workerData.boundMs);
`;

const boundMs = Number(process.env[FILE_BOUND_ENV] ?? '');
if (process.env.NODE_TEST_CONTEXT !== undefined && Number.isFinite(boundMs) && boundMs > 0) {
  const watchdog = new Worker(WATCHDOG, {
    eval: true,
    workerData: { pid: process.pid, file: process.argv[1] ?? '(unknown file)', boundMs },
  });
  watchdog.unref();
}
