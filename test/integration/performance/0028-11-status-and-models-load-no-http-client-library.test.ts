// Issue 28, fast CLI: `switchyard status` loaded undici (109 modules, ~40 ms and ~13 MB before the
// first byte) for one GET, and the config loader with every section's zod schema (~130 modules)
// even when --url said where the gateway is. The admin commands now read over node:http
// (src/cli/http-requester.ts), and the config loader is imported only when a config file is read.
// Checked by what a spawned command loads (an import trace), not by a timing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import { loadedBy } from '#test/fixtures/loaded-modules.ts';

const unneeded = (urls: readonly string[]): string[] =>
  urls.filter((u) => /\/node_modules\/(undici|zod|smol-toml)\//.test(u) || /\/src\/config\//.test(u));

/** A stand-in admin API: one hosts report, one models view (what status and models read). */
async function adminApi(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    req.resume();
    const body =
      req.url === '/admin/hosts'
        ? {
            hosts: [
              {
                name: 'a',
                kind: 'vllm',
                health: { status: 'healthy', last_error: null },
                discovery: { state: 'known', last_error: null },
                loaded: ['m'],
                available_on_demand: [],
                models: {},
                leases: {},
              },
            ],
            queue_depth: {},
          }
        : { models: [] };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return { url: `http://127.0.0.1:${address.port}`, server };
}

test('status --url reads the gateway without undici and without the config schemas', { timeout: 120_000 }, async () => {
  const api = await adminApi();
  try {
    const { urls, code, stdout } = await loadedBy(['status', '--url', api.url]);
    assert.equal(code, 0, `status read the stand-in gateway: ${stdout}`);
    assert.match(stdout, /\ba\b.*healthy/);
    assert.ok(
      urls.some((u) => u.endsWith('/src/cli/status.ts')),
      'the command ran',
    );
    assert.deepEqual(unneeded(urls), [], 'status --url loads only what it uses');
  } finally {
    api.server.close();
  }
});

test('status of a gateway that is down says so, still without undici', { timeout: 120_000 }, async () => {
  const { urls, code, stderr } = await loadedBy(['status', '--url', 'http://127.0.0.1:1']);
  assert.equal(code, 3);
  assert.match(stderr, /cannot read http:\/\/127\.0\.0\.1:1\/admin\/hosts/);
  assert.deepEqual(unneeded(urls), []);
});

test('models --url reads the models view without undici', { timeout: 120_000 }, async () => {
  const api = await adminApi();
  try {
    const { urls, code } = await loadedBy(['models', '--url', api.url]);
    assert.ok(
      urls.some((u) => u.endsWith('/src/cli/models.ts')),
      'the command ran',
    );
    assert.notEqual(code, null);
    assert.deepEqual(
      urls.filter((u) => /\/node_modules\/undici\//.test(u)),
      [],
    );
  } finally {
    api.server.close();
  }
});
