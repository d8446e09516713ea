// Issue 21, item 12: `npm ci --omit=dev`, the usual production install, removed the Node 24 runtime
// (the `node` package was a devDependency), and `node bin/switchyard.js` on the system Node then
// failed with advice to run the command that had just failed. Now `node` is a dependency (the
// lockfile agrees), the shim started by an older Node runs the command under the bundled Node 24,
// a package without one says what to install, and the package carries its LICENSE.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { accessSync, constants, realpathSync } from 'node:fs';
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

const ROOT = new URL('../../', import.meta.url).pathname;

interface Manifest {
  readonly license: string;
  readonly dependencies: Record<string, string>;
  readonly devDependencies: Record<string, string>;
}
interface LockEntry {
  readonly dev?: boolean;
  readonly dependencies?: Record<string, string>;
  readonly devDependencies?: Record<string, string>;
}

test('the Node 24 runtime is a production dependency, in package.json and in the lockfile', async () => {
  const manifest = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as Manifest;
  assert.ok(manifest.dependencies.node?.startsWith('^24'), 'node is in dependencies');
  assert.equal(manifest.devDependencies.node, undefined, 'node is not a devDependency (npm ci --omit=dev would remove it)');
  const lock = JSON.parse(await readFile(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };
  const root = lock.packages[''];
  assert.deepEqual(root?.dependencies, manifest.dependencies, 'the lockfile lists the same dependencies');
  assert.deepEqual(root?.devDependencies, manifest.devDependencies, 'and the same devDependencies');
  // The runtime and everything its install script needs survive --omit=dev.
  const pending = ['node'];
  for (let name = pending.pop(); name !== undefined; name = pending.pop()) {
    const entry = lock.packages[`node_modules/${name}`];
    assert.ok(entry !== undefined, `${name} is in the lockfile`);
    assert.notEqual(entry.dev, true, `${name} is not marked dev`);
    pending.push(...Object.keys(entry.dependencies ?? {}));
  }
});

test('the package carries the Apache-2.0 licence text its package.json names', async () => {
  const manifest = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as Manifest;
  assert.equal(manifest.license, 'Apache-2.0');
  const text = await readFile(join(ROOT, 'LICENSE'), 'utf8');
  assert.match(text, /Apache License\s+Version 2\.0, January 2004/);
  assert.match(text, /TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION/);
  assert.match(text, /END OF TERMS AND CONDITIONS/);
});

/** A `node` on PATH older than 24 (the system Node), if this machine has one. */
function olderNode(): string | undefined {
  const ours = realpathSync(process.execPath);
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, 'node');
    try {
      accessSync(candidate, constants.X_OK);
      if (realpathSync(candidate) !== ours) return candidate;
    } catch {
      // not there
    }
  }
  return undefined;
}

interface Ran {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function run(file: string, args: readonly string[]): Promise<Ran> {
  return new Promise((resolve) => {
    // execFile kills the child when the timeout passes, so nothing outlives a failing test.
    execFile(file, args, { timeout: 60_000, killSignal: 'SIGKILL' }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
      resolve({ code, stdout, stderr });
    });
  });
}

const older = olderNode();
const olderMajor =
  older === undefined ? undefined : Number((await run(older, ['-p', 'process.versions.node'])).stdout.split('.')[0]);
const skip = older === undefined || olderMajor === undefined || olderMajor >= 24 ? 'no Node older than 24 on PATH' : false;

test('bin/switchyard.js started by an older Node runs the command under the bundled Node 24', { skip }, async () => {
  const version = (JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  const ran = await run(older!, [join(ROOT, 'bin/switchyard.js'), '--version']);
  assert.equal(ran.code, 0, `exit 0; stderr: ${ran.stderr}`);
  assert.equal(ran.stdout, `switchyard ${version}\n`);
  const check = await run(older!, [join(ROOT, 'bin/switchyard.js'), 'check-config', join(ROOT, 'examples/switchyard.toml')]);
  assert.equal(check.code, 0, `check-config ran under Node 24; stderr: ${check.stderr}`);
});

test('without a bundled Node 24, an older Node says what to install, not to run what just failed', { skip }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-no-node-'));
  try {
    await cp(join(ROOT, 'bin'), join(dir, 'bin'), { recursive: true });
    await cp(join(ROOT, 'package.json'), join(dir, 'package.json'));
    const ran = await run(older!, [join(dir, 'bin/switchyard.js'), '--version']);
    assert.equal(ran.code, 1);
    assert.match(ran.stderr, /needs Node\.js 24/);
    assert.match(ran.stderr, /npm ci --omit=dev/, 'names the install that brings Node 24');
    assert.doesNotMatch(ran.stderr, /npm start|npx switchyard/, 'does not advise the command that fails the same way');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
