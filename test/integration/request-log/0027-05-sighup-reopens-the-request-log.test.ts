// Issue 27, request log: logrotate moves the file away and sends SIGHUP; the gateway must then
// write to a new file at PATH. `switchyard serve` with `[log] requests = PATH`: lines before the
// move are in the moved file, lines after the SIGHUP in the new PATH, none lost, none twice.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { startGatewayProcess, type GatewayProcess } from '#test/fixtures/processes.ts';
import { startScriptedNode, type ScriptedNode } from '#test/fixtures/scripted-node.ts';
import { eventually } from '#test/fixtures/http.ts';
import { linesOf } from '#test/fixtures/request-log-files.ts';

async function chat(url: string, id: string): Promise<void> {
  const res = await request(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-request-id': id },
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }),
    signal: AbortSignal.timeout(15_000),
  });
  await res.body.text();
  assert.equal(res.statusCode, 200);
}

const ids = (lines: readonly Record<string, unknown>[]): string[] => lines.map((l) => String(l.request_id)).sort();

test('SIGHUP reopens the request log at its path after logrotate moved it', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-reqlog-hup-'));
  const logPath = join(dir, 'requests.log');
  let node: ScriptedNode | undefined;
  let gw: GatewayProcess | undefined;
  try {
    node = await startScriptedNode((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        '{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}',
      );
    });
    gw = await startGatewayProcess(
      `[server]\nlisten = "127.0.0.1:0"\n[log]\nrequests = "${logPath}"\n[[nodes]]\nname = "n"\nurl = "${node.url}"\nkind = "vllm"\n`,
    );
    const url = gw.url;
    const before = ['b-0', 'b-1', 'b-2'];
    for (const id of before) await chat(url, id);
    await eventually(async () => (await linesOf(logPath)).length === before.length, 15_000, 'the first lines written');
    await rename(logPath, `${logPath}.1`);
    gw.process.child.kill('SIGHUP');
    await gw.process.waitForLine((l) => l.includes('"config reloaded"'));
    const after = ['a-0', 'a-1'];
    for (const id of after) await chat(url, id);
    await eventually(async () => (await linesOf(logPath)).length === after.length, 15_000, 'the later lines in the new file');
    assert.deepEqual(ids(await linesOf(`${logPath}.1`)), before);
    assert.deepEqual(ids(await linesOf(logPath)), after);
    assert.equal(await gw.stop(), 0);
  } finally {
    await gw?.stop();
    await node?.close();
    await rm(dir, { recursive: true, force: true });
  }
});
