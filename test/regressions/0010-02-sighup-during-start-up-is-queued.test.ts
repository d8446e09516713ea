// Issue 10, item 2: `serve` installed its SIGHUP listener only after Gateway.start resolved, so a
// SIGHUP during start-up (6 s with 5,000 nodes) hit the default action and ended the process. Now the
// CLI catches SIGHUP from its first line, and a reload asked for during start-up runs once the
// gateway listens.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { gatewayToml, startCli, writeTempFile } from '#test/fixtures/processes.ts';
import { eventually, httpJson } from '#test/fixtures/http.ts';

/** How long loading the CLI, or a reload of 500 nodes, may take on a busy 2-core machine (two suites at once: 15 s was seen to be too short). */
const WAIT_MS = 120_000;

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
  // Many nodes make start-up take a while; each points at a closed loopback port.
  const nodes = Array.from({ length: 500 }, (_, i) => ({ name: `n${i}`, url: `http://127.0.0.1:${1 + (i % 1000)}`, kind: 'vllm' }));
  const file = await writeTempFile('switchyard.toml', gatewayToml(nodes));
  const proc = startCli(['serve', '--config', file.path]);
  try {
    const pid = proc.child.pid!;
    const listening = (): boolean => proc.lines.some((l) => l.includes('"gateway listening"'));
    await eventually(async () => listening() || (await catchesHangup(pid)), WAIT_MS, 'a SIGHUP handler or the gateway listening');
    assert.equal(listening(), false, 'SIGHUP could be caught before the gateway listened');
    proc.child.kill('SIGHUP');
    const listeningLine = await proc.waitForLine((l) => l.includes('"gateway listening"'));
    const url = (JSON.parse(listeningLine) as { url: string }).url;
    await proc.waitForLine((l) => l.includes('"config reloaded"'));
    assert.equal(proc.child.exitCode, null, 'still running');
    assert.equal(proc.child.signalCode, null, 'not ended by the signal');
    const queued = proc.lines.findIndex((l) => l.includes('SIGHUP during start-up'));
    const reloaded = proc.lines.findIndex((l) => l.includes('"config reloaded"'));
    assert.ok(queued >= 0, `the queued reload was logged: ${proc.lines.join('\n')}`);
    assert.ok(proc.lines.findIndex((l) => l.includes('"gateway listening"')) < reloaded, 'the reload ran after start-up');
    // Every node is down (closed ports): the gateway answers, and says so.
    const health = await httpJson('GET', `${url}/health`);
    assert.equal(typeof health.json<{ status: string }>().status, 'string');
    // A later SIGHUP reloads as before.
    proc.child.kill('SIGHUP');
    await eventually(() => proc.lines.filter((l) => l.includes('"config reloaded"')).length === 2, WAIT_MS, 'the second reload');
    assert.equal(await proc.stop(), 0);
  } finally {
    await proc.stop();
    await file.cleanup();
  }
});
