// Issue 10, item 9: a node's 400/404 with a body over 64 KiB (vLLM's validation errors echo the
// input) became a 502 and counted as a node failure, because the gateway could not read it whole
// to recognise it. Such an answer is the node's own: it is now passed through uninspected, and
// counts as a good answer for the node.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { httpJson } from '#test/fixtures/http.ts';
import { CHAT, startScriptedNode, startTestGateway, type ScriptedNode, type TestGateway } from '#test/fixtures/scripted-node.ts';

const echoed = 'y'.repeat(200 * 1024);
const errorBody = JSON.stringify({ object: 'error', type: 'BadRequestError', message: `invalid input: ${echoed}`, code: 400 });

let node: ScriptedNode;
let gw: TestGateway;

before(async () => {
  node = await startScriptedNode((_req, res) => {
    res
      .writeHead(400, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(errorBody)) })
      .end(errorBody);
  });
  gw = await startTestGateway([{ name: 'n', url: node.url }]);
});

after(async () => {
  await gw?.close();
  await node?.close();
});

test('a 400 with a 200 KiB body reaches the client whole and is not a node failure', async () => {
  const res = await httpJson('POST', `${gw.url}/v1/chat/completions`, CHAT);
  assert.equal(res.status, 400, res.text.slice(0, 300));
  assert.equal(res.text, errorBody);
  assert.equal(res.headers['x-switchyard-node'], 'n');
  const metrics = (await httpJson('GET', `${gw.url}/metrics`)).text;
  assert.match(metrics, /gateway_upstream_attempts_total\{node="n",result="success"\} 1/);
  assert.doesNotMatch(metrics, /gateway_upstream_attempts_total\{node="n",result="(reset|invalid_body|http_5xx)"\}/);
});
