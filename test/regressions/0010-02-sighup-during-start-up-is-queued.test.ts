// Issue 10, item 2: `serve` installed its SIGHUP listener only after Gateway.start resolved, so a
// SIGHUP during start-up (6 s with 5,000 nodes) hit the default action and ended the process. Now the
// CLI catches SIGHUP from its first line, and a reload asked for during start-up runs once the
// gateway listens.
//
// Issue 38, item 14: this test used 500 nodes to make start-up slow and raced the process to catch it
// starting; on a loaded machine (load ~10) the race was lost. Start-up is now held by an event: a
// preload (test/fixtures/hold-listen.ts) holds the gateway's listen() until the test sends SIGUSR2, so
// the SIGHUP is sent while the process is provably inside its start-up, on any machine.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { gatewayToml, startCli, writeTempFile } from '#test/fixtures/processes.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { untilEvent } from '#test/fixtures/events.ts';

/** A bound, not a measure: how long loading the CLI or a reload may take on a very busy 2-core machine. */
const WAIT_MS = 240_000;
const HOLD_LISTEN = new URL('../fixtures/hold-listen.ts', import.meta.url).pathname;

/** Whether the process has a handler for SIGHUP (bit 0 of SigCgt in /proc/PID/status). */
async function catchesHangup(pid: number): Promise<boolean> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const mask = /^SigCgt:\s*([0-9a-f]+)$/m.exec(status)?.[1];
    return mask !== undefined && (BigInt(`0x${mask}`) & 1n) === 1n;
  } catch {
    return false;
  }
}

test('a SIGHUP sent while the gateway starts is queued, applied once it listens, and the process keeps serving', async () => {
  // Each node points at a closed loopback port.
  const nodes = Array.from({ length: 20 }, (_, i) => ({ name: `n${i}`, url: `http://127.0.0.1:${1 + i}`, kind: 'vllm' }));
  const file = await writeTempFile('switchyard.toml', gatewayToml(nodes));
  const proc = startCli(['serve', '--config', file.path], {
    NODE_OPTIONS: `--import=${HOLD_LISTEN}`,
    SWITCHYARD_TEST_HOLD_LISTEN: '1',
  });
  try {
    const pid = proc.child.pid!;
    const listening = (): boolean => proc.lines.some((l) => l.includes('"gateway listening"'));
    await untilEvent(
      () => proc.stderr.some((l) => l.includes('hold-listen: listen held')),
      [proc.output],
      'start-up to reach listen()',
    );
    assert.equal(listening(), false, 'the listener is held');
    assert.equal(await catchesHangup(pid), true, 'SIGHUP is caught during start-up');
    proc.child.kill('SIGHUP');
    await proc.waitForLine((l) => l.includes('SIGHUP during start-up'), WAIT_MS);
    assert.equal(proc.child.exitCode, null, 'the SIGHUP did not end the process');
    proc.child.kill('SIGUSR2'); // start-up may end now
    const listeningLine = await proc.waitForLine((l) => l.includes('"gateway listening"'), WAIT_MS);
    const url = (JSON.parse(listeningLine) as { url: string }).url;
    await proc.waitForLine((l) => l.includes('"config reloaded"'), WAIT_MS);
    assert.equal(proc.child.exitCode, null, 'still running');
    assert.equal(proc.child.signalCode, null, 'not ended by the signal');
    const queued = proc.lines.findIndex((l) => l.includes('SIGHUP during start-up'));
    const started = proc.lines.findIndex((l) => l.includes('"gateway listening"'));
    const reloaded = proc.lines.findIndex((l) => l.includes('"config reloaded"'));
    assert.ok(queued >= 0 && queued < started, `the reload was queued during start-up: ${proc.lines.join('\n')}`);
    assert.ok(started < reloaded, 'the reload ran after start-up');
    // Every node is down (closed ports): the gateway answers, and says so.
    const health = await httpJson('GET', `${url}/health`);
    assert.equal(typeof health.json<{ status: string }>().status, 'string');
    // A later SIGHUP reloads as before.
    proc.child.kill('SIGHUP');
    await untilEvent(
      () => proc.lines.filter((l) => l.includes('"config reloaded"')).length === 2,
      [proc.output],
      'the second reload',
    );
    assert.equal(await proc.stop(), 0);
  } finally {
    await proc.stop();
    await file.cleanup();
  }
});
