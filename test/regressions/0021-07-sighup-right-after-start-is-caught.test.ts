// Issue 21, item 7: a SIGHUP in the first ~100 ms after `serve` started still ended it (exit 129),
// although 0010-02 queues one sent during start-up. The entry shim replaced itself (process.execve)
// to add V8 heap flags before it listened for SIGHUP: in the first image nothing caught it, and an
// exec resets every handler, so the new image's whole Node boot was a window too (0010-02 only
// signalled once a handler showed). Now the shim's first statement catches SIGHUP and nothing
// replaces the process: from the moment its JavaScript runs, it catches SIGHUP until it exits, and
// a SIGHUP sent at that first moment is applied once the gateway listens. (What remains is Node's
// own boot before the first line of any script, the same for every Node program.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { gatewayToml, startCli, writeTempFile } from '#test/fixtures/processes.ts';

interface Observation {
  readonly catchesHangup: boolean;
  readonly cmdline: string;
}

/** The process's SIGHUP disposition (bit 0 of SigCgt) and command line; undefined once it is gone. */
async function observe(pid: number): Promise<Observation | undefined> {
  try {
    const [status, cmdline] = await Promise.all([
      readFile(`/proc/${pid}/status`, 'utf8'),
      readFile(`/proc/${pid}/cmdline`, 'utf8'),
    ]);
    const mask = /^SigCgt:\s*([0-9a-f]+)$/m.exec(status)?.[1];
    if (/^State:\s*Z/m.test(status)) return undefined;
    return {
      catchesHangup: mask !== undefined && (BigInt(`0x${mask}`) & 1n) === 1n,
      cmdline: cmdline.split('\0').join(' ').trim(),
    };
  } catch {
    return undefined;
  }
}

test('serve catches SIGHUP from its first line on, in the process that was started, and applies one sent then', async () => {
  // Many nodes make start-up take a while; each points at a closed loopback port.
  const nodes = Array.from({ length: 200 }, (_, i) => ({
    name: `n${i}`,
    url: `http://127.0.0.1:${1 + (i % 1000)}`,
    kind: 'vllm',
  }));
  const file = await writeTempFile('switchyard.toml', gatewayToml(nodes));
  const proc = startCli(['serve', '--config', file.path]);
  try {
    const pid = proc.child.pid ?? 0;
    const listening = (): boolean => proc.lines.some((l) => l.includes('"gateway listening"'));
    const seen: Observation[] = [];
    let signalled = false;
    // Watch the process from its start until it listens (or ends): each look is one pair of reads.
    while (!listening() && proc.child.exitCode === null && proc.child.signalCode === null) {
      const now = await observe(pid);
      if (now === undefined) break;
      seen.push(now);
      if (now.catchesHangup && !signalled) {
        // The first moment it catches SIGHUP: a SIGHUP now must be kept, not fatal.
        proc.child.kill('SIGHUP');
        signalled = true;
      }
    }
    await proc.waitForLine((l) => l.includes('"gateway listening"'));
    const first = seen.findIndex((o) => o.catchesHangup);
    assert.ok(first >= 0, 'the process was seen catching SIGHUP before it listened');
    const images = [...new Set(seen.map((o) => o.cmdline))];
    assert.deepEqual(
      images,
      [seen[0]?.cmdline],
      `the process replaced itself after it started (${images.join(' → ')}): a SIGHUP in between ends it`,
    );
    const dropped = seen.slice(first).findIndex((o) => !o.catchesHangup);
    assert.equal(dropped, -1, 'once it caught SIGHUP, it never stopped catching it');
    await proc.waitForLine((l) => l.includes('"config reloaded"'));
    assert.equal(proc.child.exitCode, null, 'still running');
    assert.equal(proc.child.signalCode, null, 'not ended by the signal');
    assert.equal(await proc.stop(), 0);
  } finally {
    await proc.stop();
    await file.cleanup();
  }
});
