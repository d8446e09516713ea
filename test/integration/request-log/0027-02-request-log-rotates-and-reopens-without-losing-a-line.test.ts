// Issue 27, request log: a file grows for ever unless it rotates, and logrotate moves it away and
// sends SIGHUP. Now the file rotates by size (`[log] requests_max_bytes`, PATH.1 … PATH.N) and
// the reopen SIGHUP runs closes and opens PATH again, both between two writes: under a load of
// concurrent requests, with the file rotating and moved away mid-run, every request's line is in
// exactly one file. With `[server] workers = 2` the owner thread writes every line, once.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { startScriptedNode, type ScriptedNode } from '#test/fixtures/scripted-node.ts';
import { startInProcessGateway, type InProcessGateway } from '#test/fixtures/in-process.ts';
import { postFresh } from '#test/fixtures/fresh-connection.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { everyLine, linesOf } from '#test/fixtures/request-log-files.ts';

let dir: string;
let node: ScriptedNode;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'switchyard-reqlog-rotate-'));
  node = await startScriptedNode((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      '{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}',
    );
  });
});

after(async () => {
  await node?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

function toml(logPath: string, server = '', log = ''): string {
  return [
    '[server]\nlisten = "127.0.0.1:0"\ndrain_timeout = "5s"',
    server,
    '[health]\ninterval = "1s"',
    `[log]\nrequests = "${logPath}"`,
    log,
    `[[nodes]]\nname = "n"\nurl = "${node.url}"\nkind = "vllm"`,
  ].join('\n');
}

async function ready(gw: InProcessGateway): Promise<void> {
  if (!(await gw.gateway.firstRoundDone(15_000))) throw new Error('the node was not probed within 15 s');
}

/** logrotate's move: PATH renamed away (retried while a rotation has it renamed to PATH.1 and not yet reopened). */
async function moveAway(from: string, to: string): Promise<void> {
  for (let tries = 0; ; tries++) {
    try {
      await rename(from, to);
      return;
    } catch (error) {
      if (tries > 1000 || !(error instanceof Error && 'code' in error && error.code === 'ENOENT')) throw error;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
}

const chat = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };

test('rotation by size and reopens under load lose no line and write none twice', async () => {
  const logPath = join(dir, 'load.log');
  const gw = await startInProcessGateway(toml(logPath, '', 'requests_max_bytes = "8KiB"\nrequests_keep = 100'), {
    logLevel: 'info',
  });
  try {
    await ready(gw);
    const total = 240;
    const ids = Array.from({ length: total }, (_, i) => `load-${i}`);
    let sent = 0;
    const moved: Promise<void>[] = [];
    const worker = async (): Promise<void> => {
      while (sent < total) {
        const i = sent++;
        // A logrotate mid-run: the file moved away, then the reopen SIGHUP asks for.
        if (i === 80 || i === 160) moved.push(moveAway(logPath, `${logPath}.moved-${i}`).then(() => gw.gateway.reopenLogs()));
        if (i % 20 === 0) void gw.gateway.reopenLogs();
        const res = await request(`${gw.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-request-id': ids[i] ?? '' },
          body: JSON.stringify(chat),
          signal: AbortSignal.timeout(30_000),
        });
        await res.body.text();
        assert.equal(res.statusCode, 200);
      }
    };
    await Promise.all(Array.from({ length: 16 }, worker));
    await Promise.all(moved);
    await gw.gateway.requestLogFlushed();
    const lines = await everyLine(logPath);
    const counts = new Map<string, number>();
    for (const l of lines) counts.set(String(l.request_id), (counts.get(String(l.request_id)) ?? 0) + 1);
    const missing = ids.filter((id) => counts.get(id) === undefined);
    const twice = ids.filter((id) => (counts.get(id) ?? 0) > 1);
    assert.deepEqual(missing, [], 'every request has its line');
    assert.deepEqual(twice, [], 'no line written twice');
    assert.equal(lines.length, total);
    // It did rotate: PATH.1 exists, and no file (bar a batch's worth) is past the bound.
    assert.ok((await linesOf(`${logPath}.1`)).length > 0, 'rotated at least once');
    const metrics = await httpJson('GET', `${gw.url}/metrics`);
    assert.match(metrics.text, new RegExp(`gateway_request_log_lines_total\\{outcome="written"\\} ${total}`));
    assert.match(metrics.text, /gateway_request_log_lines_total\{outcome="dropped"\} 0/);
  } finally {
    await gw.close();
  }
});

test('with two workers every request is written once, by the owner', async () => {
  const logPath = join(dir, 'workers.log');
  const gw = await startInProcessGateway(toml(logPath, 'workers = 2'), { logLevel: 'info' });
  try {
    await ready(gw);
    const ids = Array.from({ length: 40 }, (_, i) => `w-${i}`);
    // Fresh connections: the kernel spreads them over both workers.
    const answers = await Promise.all(ids.map((id) => postFresh(`${gw.url}/v1/chat/completions`, chat, { 'x-request-id': id })));
    assert.ok(
      answers.every((a) => a.status === 200),
      JSON.stringify(answers.filter((a) => a.status !== 200)),
    );
    const rows = (await httpJson('GET', `${gw.url}/admin/runtime`)).json<{ workers: { admitted: number }[] }>().workers;
    assert.equal(rows.length, 2);
    assert.ok(
      rows.every((row) => row.admitted > 0),
      `both workers served: ${JSON.stringify(rows)}`,
    );
    await gw.gateway.requestLogFlushed();
    const lines = await linesOf(logPath);
    assert.deepEqual(lines.map((l) => String(l.request_id)).sort(), [...ids].sort());
    for (const l of lines) {
      assert.equal(l.node, 'n');
      assert.equal(l.prompt_tokens, 3);
      assert.deepEqual(l.attempts, [{ node: 'n', outcome: 'success', status: 200 }]);
    }
  } finally {
    await gw.close();
  }
});
