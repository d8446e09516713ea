#!/usr/bin/env node
// Entry shim: Node 24 runs the TypeScript sources directly (type stripping). The `node` dependency
// installs a Node 24 binary into node_modules (also with `npm ci --omit=dev`); npm scripts and
// `npx switchyard` put it first on PATH. Started by an older Node, the shim runs the same command
// under that Node 24 (src/ needs it) and ends as it ends.

// The very first thing, before anything that takes time: SIGHUP's default action ends the process,
// so count the SIGHUPs that arrive while the sources load and hand them over; runCli installs its
// own listener before it returns, and `serve` applies a reload asked for during start-up once the
// gateway listens. Nothing may replace this process later (an exec would reset the listener and
// leave a window in which a SIGHUP kills it): V8 heap flags are the launcher's to pass
// (docs/performance.md, "Memory flags"; examples/switchyard.service passes the chosen ones).
const early = { hangups: 0 };
const countHangup = () => {
  early.hangups += 1;
};
process.on('SIGHUP', countHangup);

const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  const { runUnderBundledNode } = await import('./older-node.js');
  process.exit(await runUnderBundledNode());
}

// Node's compile cache (on disk, in os.tmpdir()/node-compile-cache unless NODE_COMPILE_CACHE names
// another directory; NODE_DISABLE_COMPILE_CACHE=1 turns it off) keeps each source's stripped
// JavaScript and its bytecode: a start that finds them neither loads the TypeScript stripper (a
// WebAssembly module, ~18 MB of RSS held for the process's life) nor compiles again.
// docs/performance.md, "Start and the compile cache". A cache that cannot be written is skipped.
const { enableCompileCache } = await import('node:module');
enableCompileCache?.();

// zod's locales: English only (bin/zod-english-only.js says why).
const { keepZodToEnglish } = await import('./zod-english-only.js');
keepZodToEnglish();

// prom-client's one require of @opentelemetry/api: loaded on first use (bin/otel-api-on-first-use.js says why).
const { deferPromClientsOtelApi } = await import('./otel-api-on-first-use.js');
deferPromClientsOtelApi();

const { runCli } = await import('../src/cli/main.ts');
const running = runCli(process.argv.slice(2), { hangupsBeforeStart: early.hangups });
process.off('SIGHUP', countHangup);
process.exitCode = await running;
