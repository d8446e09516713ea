#!/usr/bin/env node
// Entry shim: Node 24 runs the TypeScript sources directly (type stripping). `npm ci` installs a
// Node 24 binary into node_modules/.bin, which npm scripts and `npx switchyard` put first on PATH.

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
  process.stderr.write(
    `switchyard needs Node.js 24 or newer (this is ${process.versions.node}).\n` +
      'Run it through npm, which uses the Node 24 that `npm ci` installed: `npm start`, or `npx switchyard ...`.\n',
  );
  process.exit(1);
}

const { runCli } = await import('../src/cli/main.ts');
const running = runCli(process.argv.slice(2), { hangupsBeforeStart: early.hangups });
process.off('SIGHUP', countHangup);
process.exitCode = await running;
