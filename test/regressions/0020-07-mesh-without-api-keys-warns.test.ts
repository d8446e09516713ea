// Issue 20, item 7: a site without `[server] api_keys` lets anyone who reaches it run inference on
// every site that pins it (its forwards are signed by the site, and served without client keys).
// That was said only in the forwarding doc. Now serve warns once at start, and check-config says
// it in its summary, whenever [mesh] is set and api_keys is empty; neither says it with keys set.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { HangupRelay } from '#src/cli/hangups.ts';
import { runCheckConfig } from '#src/cli/check-config.ts';
import { MemoryBus } from '#src/mesh/index.ts';
import { newSiteKey } from '#src/mesh/site-key-file.ts';
import { gatewayToml, meshToml } from '#test/fixtures/gateway-configs.ts';
import { startGateway } from '#test/fixtures/in-process-fleet.ts';

const WARNING =
  /\[mesh\] is set but \[server\] api_keys is empty: anyone who reaches this listener can run inference on the sites that pin this one/;
const key = newSiteKey();
const mesh = meshToml('a', [{ id: 'b', publicKey: newSiteKey().publicKey }]);
const nodes = [{ name: 'n', url: 'http://127.0.0.1:9', kind: 'vllm' }];

test('serve warns once at start when [mesh] is set and [server] api_keys is empty', async () => {
  const bus = new MemoryBus();
  for (const [serverExtra, warned] of [
    ['', 1],
    ['api_keys = ["k-1"]', 0],
  ] as const) {
    const gw = await startGateway(gatewayToml(nodes, mesh, serverExtra), {
      meshGossip: { key, transport: () => bus.transport('peer-a') },
    });
    try {
      const lines = gw.logs().filter((l) => typeof l.msg === 'string' && WARNING.test(l.msg));
      assert.equal(lines.length, warned, `api_keys ${serverExtra === '' ? 'empty' : 'set'}`);
      if (warned === 1) assert.equal(lines[0]?.level, 40, 'a warning');
    } finally {
      await gw.close();
    }
  }
});

test('check-config says so in its summary', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-0020-07-'));
  try {
    for (const [serverExtra, warned] of [
      ['', true],
      ['api_keys = ["k-1"]', false],
    ] as const) {
      const path = join(dir, 'site.toml');
      await writeFile(path, gatewayToml(nodes, mesh, serverExtra));
      const out: string[] = [];
      const sink = new Writable({ write: (chunk: Buffer, _e, done) => void (out.push(chunk.toString()), done()) });
      const io = { stdout: sink, stderr: sink, env: {}, signal: new AbortController().signal, hangups: new HangupRelay(0) };
      assert.equal(await runCheckConfig([path], io), 0, out.join(''));
      assert.equal(WARNING.test(out.join('')), warned, out.join(''));
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
