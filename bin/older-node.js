// Loaded by the entry shim only when an older Node started it (plain JavaScript that Node 18+ runs).
// The sources need Node 24; the `node` dependency brings one (npm ci, also with --omit=dev). Run the
// same command under it and end as it ends. Signals a service manager or `kill` sends to this
// process (TERM, HUP, USR2) are passed on once; INT and QUIT come from the terminal, which sends them
// to the whole foreground process group, the child included, so they are not sent a second time
// (a second SIGINT or SIGTERM stops a draining gateway at once).
// Without a Node 24 next to the package, say what is needed instead.

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PASSED_ON = ['SIGTERM', 'SIGHUP', 'SIGUSR2'];
const LEFT_TO_THE_TERMINAL = ['SIGINT', 'SIGQUIT'];

/** The Node binary the `node` package installed, wherever npm put the package (hoisted or not). */
function bundledNode() {
  try {
    const pkg = createRequire(import.meta.url).resolve('node/package.json');
    const binary = join(dirname(pkg), 'bin', process.platform === 'win32' ? 'node.exe' : 'node');
    return existsSync(binary) ? binary : undefined;
  } catch {
    return undefined;
  }
}

/** Resolves with the exit code to end with (after re-raising a signal that ended the child). */
export async function runUnderBundledNode() {
  const packageDir = dirname(dirname(fileURLToPath(import.meta.url)));
  const node = bundledNode();
  if (node === undefined) {
    process.stderr.write(
      `switchyard needs Node.js 24 or newer (this is ${process.versions.node}), and none is installed with it.\n` +
        `Install the package's dependencies, which include Node 24: \`npm ci --omit=dev\` in ${packageDir}\n` +
        '(or put a Node.js 24 first on PATH).\n',
    );
    return 1;
  }
  const child = spawn(node, [...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit' });
  const forward = (signal) => () => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  };
  for (const signal of PASSED_ON) process.on(signal, forward(signal));
  for (const signal of LEFT_TO_THE_TERMINAL) process.on(signal, () => {});
  const ended = await new Promise((resolve) => {
    child.once('error', (error) => resolve({ error }));
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  if (ended.error !== undefined) {
    process.stderr.write(`switchyard: could not start ${node}: ${ended.error.message}\n`);
    return 1;
  }
  if (ended.signal !== null) {
    for (const signal of [...PASSED_ON, ...LEFT_TO_THE_TERMINAL]) process.removeAllListeners(signal);
    process.kill(process.pid, ended.signal);
  }
  return ended.code ?? 1;
}
