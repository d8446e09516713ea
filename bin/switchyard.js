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
const { runCli } = await import('../src/cli/main.ts');
process.exitCode = await runCli(process.argv.slice(2));
