// Issue 10, item 11: an SSE answer that carried a Content-Length hung the client ~65 s after a
// mid-stream break: the length was passed on, then the response was ended short of it, so the
// client kept waiting for the missing bytes until keep-alive closed the socket. A pumped answer now
// never carries the node's length; the client sees the stream end at once.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { CHAT, startScriptedNode, startTestGateway, type ScriptedNode, type TestGateway } from '#test/fixtures/scripted-node.ts';

let node: ScriptedNode;
let gw: TestGateway;

before(async () => {
  node = await startScriptedNode((_req, res) => {
    // Declares far more than it sends, then its connection breaks.
    res.writeHead(200, { 'content-type': 'text/event-stream', 'content-length': '100000' });
    res.write('data: {"choices":[{"delta":{"content":"a"}}]}\n\n');
    setTimeout(() => res.socket?.destroy(), 50);
  });
  gw = await startTestGateway([{ name: 'n', url: node.url }]);
});

after(async () => {
  await gw?.close();
  await node?.close();
});

test('a stream that breaks short of its declared length ends for the client at once', async () => {
  const res = await request(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...CHAT, stream: true }),
    headersTimeout: 20_000,
    // Far below the 65 s keep-alive that used to end it, far above any machine's hiccup.
    bodyTimeout: 20_000,
  });
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-length'], undefined, 'no length on a pumped stream');
  const text = await res.body.text();
  assert.match(text, /"content":"a"/);
  assert.doesNotMatch(text, /\[DONE\]/, 'no invented [DONE]');
});
