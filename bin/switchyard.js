#!/usr/bin/env node
// Entry shim: Node 24 runs the TypeScript sources directly (type stripping). `npm ci` installs a
// Node 24 binary into node_modules/.bin, which npm scripts and `npx switchyard` put first on PATH.
const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  process.stderr.write(
    `switchyard needs Node.js 24 or newer (this is ${process.versions.node}).\n` +
      'Run it through npm, which uses the Node 24 that `npm ci` installed: `npm start`, or `npx switchyard ...`.\n',
  );
  process.exit(1);
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
