// Issue 28, item 3: every command imported the whole tree (the gateway, the mesh, libp2p) before it
// ran, so `switchyard --version` took about a second and 156 MB. Now src/cli/main.ts imports a
// command's module only to run it, and the config loader reads libp2p's address parsers only for a
// [mesh] table. `serve` without [mesh] held libp2p, the mesh service, pino-pretty and the multipart
// parser (158 MB idle); they now load when [mesh], `--log-format pretty` or a multipart request needs
// them. Checked by what a spawned CLI loads (an import trace), not by a timing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gatewayToml, writeTempFile } from '#test/fixtures/processes.ts';
import { loadedBy, loadedByServe } from '#test/fixtures/loaded-modules.ts';

// The mesh's config table (src/mesh/config/: the [mesh] table every config load reads, issue 39) is
// not the mesh: its libp2p address parsers load only for a [mesh] address.
const heavy = (urls: readonly string[]): string[] =>
  urls.filter(
    (u) =>
      /\/node_modules\/(@libp2p|libp2p|@chainsafe|@multiformats|undici|prom-client|pino)\//.test(u) ||
      /\/src\/(mesh\/(?!config\/)|gateway\/|proxy\/)/.test(u),
  );

test('--version and --help load no command, no gateway and no libp2p', async () => {
  for (const args of [['--version'], ['--help'], ['serve', '--help']]) {
    const { urls, code, stdout } = await loadedBy(args);
    assert.equal(code, 0, `switchyard ${args.join(' ')} exits 0`);
    assert.ok(stdout.includes('switchyard'), 'it printed its answer');
    assert.ok(
      urls.some((u) => u.endsWith('/src/cli/main.ts')),
      `the trace saw the CLI load: ${urls.length} modules`,
    );
    assert.deepEqual(heavy(urls), [], `switchyard ${args.join(' ')} loaded only what it uses`);
  }
});

test('check-config of a config without [mesh] loads neither the gateway nor libp2p', async () => {
  const file = await writeTempFile('switchyard.toml', gatewayToml([{ name: 'a', url: 'http://127.0.0.1:1', kind: 'vllm' }]));
  try {
    const { urls, code } = await loadedBy(['check-config', file.path]);
    assert.equal(code, 0);
    assert.ok(
      urls.some((u) => u.endsWith('/src/cli/check-config.ts')),
      'the command ran',
    );
    assert.deepEqual(heavy(urls), []);
  } finally {
    await file.cleanup();
  }
});

test('status (the gateway unreachable) loads neither the gateway nor libp2p', async () => {
  const { urls, code } = await loadedBy(['status', '--url', 'http://127.0.0.1:1']);
  assert.equal(code, 3, 'the gateway cannot be read');
  assert.ok(
    urls.some((u) => u.endsWith('/src/cli/status.ts')),
    'the command ran',
  );
  // status reads the gateway over HTTP with undici: that much it uses.
  assert.deepEqual(
    heavy(urls).filter((u) => !u.includes('/node_modules/undici/')),
    [],
  );
});

test('serve without [mesh] loads neither libp2p nor the mesh service, nor the pretty printer or the multipart parser', async () => {
  const { urls, code } = await loadedByServe();
  assert.equal(code, 0);
  assert.ok(
    urls.some((u) => u.endsWith('/src/gateway/parts.ts')),
    'the gateway loaded',
  );
  const federation = urls.filter(
    (u) =>
      /\/node_modules\/(@libp2p|libp2p|@chainsafe|@multiformats|multiformats|pino-pretty|@fastify\/busboy)\//.test(u) ||
      /\/src\/mesh\/(mesh-service|site-key-file|site-codec|gossip\/)/.test(u),
  );
  assert.deepEqual(federation, [], 'what a gateway without [mesh] does not use is not loaded');
});
