// Issue 28, lean process: every value import of 'undici' loaded undici's whole index (~110 modules:
// fetch, WebSocket, the cache stores with sqlite, the mock agents) where the gateway runs Pool, Agent
// and the error classes (~22). Those now come from their own modules through src/core/undici-parts.ts
// (an idle `serve`, one node, no [mesh]: ~4 MB of RSS). The architecture test keeps src/ from
// importing the index; this checks nothing else a serving gateway loads brings it back (an import
// trace, not its RSS).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startCli, writeTempFile } from '#test/fixtures/processes.ts';
import { IMPORT_TRACE_HOOK as HOOK } from '#test/fixtures/loaded-modules.ts';

test('serve loads undici’s Pool, Agent and errors, not undici’s index', { timeout: 150_000 }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-import-trace-'));
  const trace = join(dir, 'loaded.txt');
  const file = await writeTempFile('switchyard.toml', gatewayToml([{ name: 'a', url: 'http://127.0.0.1:1', kind: 'vllm' }]));
  const proc = startCli(['serve', '--config', file.path], { NODE_OPTIONS: `--import=${HOOK}`, SWITCHYARD_TEST_IMPORT_TRACE: trace });
  try {
    await proc.waitForLine((l) => l.includes('"gateway listening"'), 120_000);
    assert.equal(await proc.stop(), 0);
    const undici = (await readFile(trace, 'utf8')).split('\n').filter((l) => l.includes('/node_modules/undici/'));
    assert.ok(undici.some((l) => l.endsWith('/undici/lib/dispatcher/pool.js')), 'the gateway loaded undici’s Pool');
    assert.deepEqual(undici.filter((l) => l.endsWith('/undici/index.js')), [], 'undici’s index is not loaded');
  } finally {
    await proc.stop();
    await file.cleanup();
    await rm(dir, { recursive: true, force: true });
  }
});
