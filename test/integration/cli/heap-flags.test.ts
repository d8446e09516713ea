// bin/switchyard.js never replaces itself (issue 21, item 7: an exec resets the SIGHUP handler and
// leaves a window in which a SIGHUP ends the process). V8 heap flags are the launcher's to pass
// (docs/performance.md, "Memory flags"); the process that was started is the one that serves, with
// exactly the command line it was given.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { gatewayToml, startCli, writeTempFile } from '#test/fixtures/processes.ts';

test('serve runs in the process that was started, its command line unchanged', async () => {
  const file = await writeTempFile('switchyard.toml', gatewayToml([{ name: 'a', url: 'http://127.0.0.1:1', kind: 'vllm' }]));
  const proc = startCli(['serve', '--config', file.path], { NODE_OPTIONS: '--max-old-space-size=512' });
  try {
    await proc.waitForLine((l) => l.includes('"gateway listening"'));
    const cmdline = (await readFile(`/proc/${proc.child.pid}/cmdline`, 'utf8')).split('\0').filter((arg) => arg !== '');
    assert.deepEqual(cmdline.slice(1), [...proc.child.spawnargs.slice(1)], 'nothing was added: no re-exec');
    const environ = await readFile(`/proc/${proc.child.pid}/environ`, 'utf8');
    assert.ok(
      environ.split('\0').includes('NODE_OPTIONS=--max-old-space-size=512'),
      "the operator's flags reach the gateway as given",
    );
    assert.equal(await proc.stop(), 0, 'SIGTERM stops it as before');
  } finally {
    await proc.stop();
    await file.cleanup();
  }
});
