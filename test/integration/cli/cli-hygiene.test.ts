// The CLI's first-ten-minutes behaviour (issue 16): --version, -h/--help on every command, serve's
// default config lookup (and what it says about it), check-config's summary and syntax errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultConfigPath, DEFAULT_CONFIG_PATHS } from '#src/cli/config-lookup.ts';
import { startListingNode } from '#test/fixtures/listing-node.ts';

const CLI = new URL('../../../bin/switchyard.js', import.meta.url).pathname;

/** Runs the CLI in `cwd` to its end (or until `until` matches stderr, then SIGTERM). */
async function run(
  args: readonly string[],
  cwd = process.cwd(),
  until?: RegExp,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    if (until !== undefined && until.test(stdout + stderr)) child.kill('SIGTERM');
  });
  child.stdout.on('data', () => {
    if (until !== undefined && until.test(stdout + stderr)) child.kill('SIGTERM');
  });
  const killer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  const [code] = (await once(child, 'close')) as [number | null];
  clearTimeout(killer);
  return { code, stdout, stderr };
}

test('--version prints the package version', async () => {
  const pkg = JSON.parse(await readFile(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
  const result = await run(['--version']);
  assert.equal(result.code, 0);
  assert.equal(result.stdout, `switchyard ${pkg.version}\n`);
});

for (const flag of ['-h', '--help']) {
  test(`every command answers ${flag} with its usage, exit 0`, async () => {
    const top = await run([flag]);
    assert.equal(top.code, 0);
    const commands = [...top.stdout.matchAll(/^ {2}([a-z][a-z-]*) /gm)].map((m) => m[1] ?? '');
    assert.deepEqual([...commands].sort(), [
      'batches',
      'check-config',
      'demo',
      'init',
      'keygen',
      'models',
      'serve',
      'sim',
      'status',
    ]);
    const results = await Promise.all(commands.map((command) => run([command, flag])));
    commands.forEach((command, index) => {
      const result = results[index];
      assert.equal(result?.code, 0, `${command} ${flag}: ${result?.stderr}`);
      assert.match(result.stdout, new RegExp(`^usage: switchyard ${command}`), `${command} ${flag}`);
    });
  });
}

test('init writes ./switchyard.toml, serve without --config runs it and says so; with none it names where it looked', async () => {
  assert.deepEqual(
    defaultConfigPath((path) => path === DEFAULT_CONFIG_PATHS[1]),
    '/etc/switchyard/switchyard.toml',
  );
  assert.deepEqual(
    defaultConfigPath(() => true),
    './switchyard.toml',
  );
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-test-'));
  const node = await startListingNode({
    listing: () => [{ id: 'm', object: 'model', created: 0, owned_by: 'acme' }],
    router: false,
  });
  try {
    const empty = await run(['serve'], dir);
    // The machine running the tests may have a system config; only a clean one shows the error.
    if (!DEFAULT_CONFIG_PATHS.slice(1).some((path) => empty.stderr.includes(`using ${path}`))) {
      assert.equal(empty.code, 2);
      assert.match(
        empty.stderr,
        /no --config given, and neither \.\/switchyard\.toml nor \/etc\/switchyard\/switchyard\.toml exists/,
      );
    }
    // The README's quick start: `init URL` writes ./switchyard.toml, `serve` runs it.
    const initialised = await run(['init', node.url, '--listen', '127.0.0.1:0'], dir);
    assert.equal(initialised.code, 0, initialised.stderr);
    assert.match(initialised.stdout, /wrote \.\/switchyard\.toml/);
    const served = await run(['serve'], dir, /gateway listening/);
    assert.match(served.stderr, /switchyard serve: no --config given; using \.\/switchyard\.toml/);
    assert.match(served.stdout, /gateway listening/);
    const again = await run(['init', node.url], dir);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /\.\/switchyard\.toml already exists; add --force to overwrite it/);
  } finally {
    await node.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test('check-config ends its summary with a newline and names the file in a TOML syntax error', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-test-'));
  try {
    const good = join(dir, 'good.toml');
    await writeFile(good, '[[nodes]]\nname = "n"\nurl = "http://127.0.0.1:1"\n');
    const ok = await run(['check-config', good]);
    assert.equal(ok.code, 0);
    assert.match(ok.stdout, /^.*good\.toml is valid\n/);
    assert.ok(ok.stdout.endsWith('\n') && !ok.stdout.endsWith('\n\n'), JSON.stringify(ok.stdout));
    const bad = join(dir, 'bad.toml');
    await writeFile(bad, '[[nodes]]\nname = "n\n');
    const broken = await run(['check-config', bad]);
    assert.equal(broken.code, 1);
    assert.match(broken.stderr, new RegExp(`^${bad.replace(/[.]/g, '\\.')}: .*line 2, column \\d+`, 'm'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
