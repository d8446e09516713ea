// Issue 21, item 13: docs and CLI that said something the code did not do. config.md and
// federation.md promised a reload when the file changes (only SIGHUP and POST /admin/reload
// reload); docs cited a PROTOCOLS.md the repository did not have; `serve --bogus` was accepted
// silently; `status` without --url ignored the config's listen address.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { startInProcessGateway } from '#test/fixtures/in-process.ts';
import { startListingNode } from '#test/fixtures/listing-node.ts';
import { gatewayToml, runCliToExit } from '#test/fixtures/processes.ts';
import { runCli } from '#src/cli/main.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const DOCS = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const text = (file: string): string => readFileSync(join(ROOT, file), 'utf8');

test('no doc promises a reload when the config file changes: only SIGHUP and POST /admin/reload reload', () => {
  const sources = readdirSync(join(ROOT, 'src'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
  // A file watch: node:fs's watch or watchFile (a Kubernetes watch of EndpointSlices is no file's).
  const fileWatch = /\bfs\.watch|\bwatchFile\(|import\s*\{[^}]*\bwatch\b[^}]*\}\s*from\s*'node:fs(\/promises)?'/;
  const watches = sources.filter((f) => fileWatch.test(readFileSync(join(ROOT, 'src', f), 'utf8')));
  assert.deepEqual(watches, [], 'the code watches no file (if it ever does, this test and the docs change with it)');
  for (const file of DOCS) {
    const promise = /when the (config )?file changes|a change to the file|on (a )?file change/i.exec(text(file));
    assert.ok(promise === null, `${file} says "${promise?.[0]}"`);
  }
  assert.match(text('docs/config.md'), /re-read on SIGHUP[^.]*`POST \/admin\/reload`, never\s+because it changed on disk/);
});

test('every relative link in README.md and docs/ names a file that exists, and no doc cites a PROTOCOLS.md the repo lacks', () => {
  for (const file of DOCS) {
    for (const match of text(file).matchAll(/\]\(([^)\s#]+)(#[^)]*)?\)/g)) {
      const target = match[1] ?? '';
      if (/^[a-z]+:/i.test(target)) continue;
      assert.ok(existsSync(join(ROOT, dirname(file), target)), `${file} links ${target}, which does not exist`);
    }
    // docs/protocols.md itself says that code comments cite it by that name.
    if (file !== 'docs/protocols.md') assert.ok(!/(?<![\w/])PROTOCOLS\.md/.test(text(file)), `${file} cites PROTOCOLS.md`);
  }
  assert.match(text('README.md'), /\[docs\/protocols\.md\]\(docs\/protocols\.md\)/, 'the README lists the protocol notes');
});

/** runCli in this process, with what it writes to stderr captured. */
async function runInProcess(args: readonly string[]): Promise<{ code: number; stderr: string }> {
  const written: string[] = [];
  const original = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  }) as typeof process.stderr.write;
  try {
    return { code: await runCli(args), stderr: written.join('') };
  } finally {
    process.stderr.write = original;
  }
}

test('every command refuses an option it does not take, naming it, with exit 2, and does not run', async () => {
  const cases: readonly (readonly string[])[] = [
    ['serve', '--bogus'],
    ['serve', '--config', 'x.toml', '--bogus=1'],
    ['serve', 'stray-argument'],
    ['check-config', 'x.toml', '--bogus'],
    ['sim', '--config', 'x.toml', '--bogus'],
    ['demo', '--bogus'],
    ['init', 'http://127.0.0.1:1', '--bogus'],
    ['status', '--bogus'],
    ['keygen', '--out', join(tmpdir(), 'never-written.key'), '--bogus'],
  ];
  for (const args of cases) {
    const run = await runInProcess(args);
    const wrong = args.find((a) => a.startsWith('--bogus') || a === 'stray-argument') ?? '';
    assert.equal(run.code, 2, `switchyard ${args.join(' ')}: exit ${run.code}; stderr: ${run.stderr}`);
    assert.match(
      run.stderr,
      new RegExp(`^switchyard ${args[0]}: (unknown option|unexpected argument) '${wrong.replace(/=.*/, '')}'`),
      args.join(' '),
    );
  }
  assert.equal(existsSync(join(tmpdir(), 'never-written.key')), false, 'keygen wrote nothing');
  // And as the operator typed it: the real process, exit 2, nothing started.
  const real = await runCliToExit(['serve', '--bogus'], { timeoutMs: 120_000 });
  assert.equal(real.code, 2);
  assert.match(real.stderr, /^switchyard serve: unknown option '--bogus'/);
  assert.doesNotMatch(real.stderr, /using \.\/switchyard\.toml|gateway listening/);
});

test('status without --url reads the gateway serve would run: --config FILE, else ./switchyard.toml; its listen and admin token', async () => {
  const node = await startListingNode({
    listing: () => [{ id: 'm', object: 'model', created: 0, owned_by: 'vllm' }],
    router: false,
  });
  const token = 'status-from-config-token';
  const toml = gatewayToml([{ name: 'n1', url: node.url, kind: 'vllm' }], `[admin]\ntoken = "${token}"\n`);
  const gw = await startInProcessGateway(toml);
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-status-'));
  try {
    const port = new URL(gw.url).port;
    // As an operator writes it: every interface; status reaches it on loopback.
    await writeFile(join(dir, 'switchyard.toml'), toml.replace('listen = "127.0.0.1:0"', `listen = "0.0.0.0:${port}"`));
    const named = await runCliToExit(['status', '--config', join(dir, 'switchyard.toml')]);
    assert.ok(named.code === 0 || named.code === 1, `the gateway was read (exit ${named.code}); stderr: ${named.stderr}`);
    assert.match(named.stdout, new RegExp(`^switchyard status {2}http://127\\.0\\.0\\.1:${port} `));
    assert.match(named.stdout, /\bn1\b/, 'its table lists the node');
    const found = await runCliToExit(['status'], { cwd: dir });
    assert.match(
      found.stdout,
      new RegExp(`http://127\\.0\\.0\\.1:${port} `),
      `./switchyard.toml was used; stderr: ${found.stderr}`,
    );
    // A config that gives no usable address says so instead of asking 127.0.0.1:8080.
    await writeFile(join(dir, 'zero.toml'), toml);
    const zero = await runCliToExit(['status', '--config', join(dir, 'zero.toml')]);
    assert.equal(zero.code, 2);
    assert.match(zero.stderr, /\[server\] listen has port 0 .*give --url/);
  } finally {
    await rm(dir, { recursive: true, force: true });
    await gw.close();
    await node.close();
  }
});
