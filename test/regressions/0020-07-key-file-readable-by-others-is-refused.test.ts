// Issue 20, item 7: a site key file that other users could read (mode 0644, what a plain
// `cp` or an editor under umask 022 leaves) was accepted silently; whoever reads it can sign
// records and forwarded requests as the site. Now, as ssh does with a private key, the gateway
// refuses to start with such a file, naming the file, its mode and the fix (`chmod 600 FILE`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newSiteKey } from '#src/mesh/site-key-file.ts';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startGateway } from '#test/fixtures/in-process-fleet.ts';

test('a gateway with a group- or world-readable [mesh] key_file refuses to start, saying how to fix it', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-0020-07-'));
  try {
    const path = join(dir, 'site.key');
    const key = newSiteKey();
    await writeFile(path, key.privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    const mesh = [
      '[mesh]',
      'site = "a"',
      'url = "http://127.0.0.1:1/a"',
      `key_file = "${path}"`,
      'listen = ["/ip4/127.0.0.1/tcp/0"]',
      '[[mesh.sites]]',
      'id = "a"',
      `public_key = "${key.publicKey}"`,
    ].join('\n');
    // A node address nothing listens on: this test is about start-up only.
    const toml = gatewayToml([{ name: 'n', url: 'http://127.0.0.1:9', kind: 'vllm' }], mesh);
    for (const mode of [0o644, 0o640]) {
      await chmod(path, mode);
      const started = await startGateway(toml).then(
        async (gw) => {
          await gw.close();
          return undefined;
        },
        (error: unknown) => error,
      );
      assert.ok(started instanceof Error, `mode ${mode.toString(8)}: the gateway started`);
      assert.match(started.message, new RegExp(`site key file ${path}: mode 0${mode.toString(8)} lets .* use the site key`));
      assert.ok(started.message.endsWith(`run chmod 600 ${path}`), started.message);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
