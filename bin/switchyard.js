#!/usr/bin/env node
// Entry shim: Node 24 runs the TypeScript sources directly (type stripping). The `node` dependency
// installs a Node 24 binary into node_modules (also with `npm ci --omit=dev`); npm scripts and
// `npx switchyard` put it first on PATH. Started by an older Node, the shim runs the same command
// under that Node 24 (src/ needs it) and ends as it ends.
const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  const { runUnderBundledNode } = await import('./older-node.js');
  process.exit(await runUnderBundledNode());
}

// V8 heap sizes, chosen by measurement (docs/performance.md, "Memory flags"). V8 sizes the heap from
// the machine's RAM, not from what the gateway keeps: on a 24 GB machine its young generation grows
// to 134 MB, and polling 1,000 nodes (~65 MB live) the old one grew to 200+ MB between collections
// (450 MB RSS). A 16 MB semi-space and a 1 GB old-space ceiling gave 260–275 MB there, 165–185 MB
// peak under proxy load instead of 290–380; 2 and 8 MB cost clearly more CPU per request.
// The ceiling leaves room for ~20,000 nodes' live state (~40 KB each at 50 models).
// A flag the operator set (on the command line or in NODE_OPTIONS) wins over ours;
// SWITCHYARD_HEAP_FLAGS=off leaves V8's defaults. The heap is sized when the process starts, so the
// shim replaces itself (same pid, same stdio, no parent process left) with a Node started with the
// flags. This runs before any signal listener exists, so nothing a listener caught could be lost.
const HEAP_FLAGS = ['--max-semi-space-size=16', '--max-old-space-size=1024'];
// V8 accepts `--max_old_space_size` too.
const given = `${process.execArgv.join(' ')} ${process.env.NODE_OPTIONS ?? ''}`.replaceAll('_', '-');
const missing = HEAP_FLAGS.filter((flag) => !given.includes(flag.slice(0, flag.indexOf('='))));
if (
  missing.length > 0 &&
  process.env.SWITCHYARD_HEAP_FLAGS !== 'off' &&
  typeof process.execve === 'function' &&
  (process.platform === 'linux' || process.platform === 'darwin')
) {
  try {
    process.execve(process.execPath, [process.execPath, ...missing, ...process.execArgv, ...process.argv.slice(1)], process.env);
  } catch {
    // Not replaceable here (e.g. a sandbox forbids exec): run with V8's defaults.
  }
}

// SIGHUP's default action ends the process. Loading the sources takes a moment, so count the SIGHUPs
// that arrive meanwhile and hand them over; runCli installs its own listener before it returns.
const early = { hangups: 0 };
const countHangup = () => {
  early.hangups += 1;
};
process.on('SIGHUP', countHangup);
const { runCli } = await import('../src/cli/main.ts');
const running = runCli(process.argv.slice(2), { hangupsBeforeStart: early.hangups });
process.off('SIGHUP', countHangup);
process.exitCode = await running;
