// bin/switchyard.js starts the gateway with the V8 heap flags chosen in docs/performance.md, in the
// same process (it replaces itself: the pid a supervisor holds stays the gateway's), unless the
// operator set their own or turned them off.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { gatewayToml, startCli, writeTempFile } from '#test/fixtures/processes.ts';

async function flagsOf(env: Record<string, string>): Promise<string[]> {
  const file = await writeTempFile('switchyard.toml', gatewayToml([{ name: 'a', url: 'http://127.0.0.1:1', kind: 'vllm' }]));
  const proc = startCli(['serve', '--config', file.path], env);
  try {
    await proc.waitForLine((l) => l.includes('"gateway listening"'));
    // The pid we spawned is the one serving: no parent was left behind.
    const cmdline = (await readFile(`/proc/${proc.child.pid}/cmdline`, 'utf8')).split('\0');
    assert.equal(await proc.stop(), 0, 'SIGTERM stops it as before');
    return cmdline.filter((arg) => arg.startsWith('--max'));
  } finally {
    await proc.stop();
    await file.cleanup();
  }
}

test('serve runs with the chosen heap flags, in the process that was started', async () => {
  assert.deepEqual(await flagsOf({}), ['--max-semi-space-size=16', '--max-old-space-size=1024']);
});

test("an operator's own heap flag wins; SWITCHYARD_HEAP_FLAGS=off leaves V8's defaults", async () => {
  // NODE_OPTIONS is not on the command line: only the flag the operator left out is added.
  assert.deepEqual(await flagsOf({ NODE_OPTIONS: '--max-old-space-size=512' }), ['--max-semi-space-size=16']);
  assert.deepEqual(await flagsOf({ SWITCHYARD_HEAP_FLAGS: 'off' }), []);
});
