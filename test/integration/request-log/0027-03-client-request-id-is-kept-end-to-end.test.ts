// Issue 27, request id: the gateway replaced every client's `x-request-id` with one of its own, so
// a client could not find its request in the node's logs or the gateway's. Now a well-formed,
// bounded id from the client is kept: returned in the answer (a success and a refusal alike) and
// sent to the node. (A malformed one is replaced: test/unit/proxy/request/request-id.test.ts, and the
// request log's test 0027-01.)
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { startScriptedNode, startTestGateway, CHAT, type ScriptedNode, type TestGateway } from '#test/fixtures/scripted-node.ts';

let node: ScriptedNode;
let gw: TestGateway;
const seen: string[] = [];

before(async () => {
  node = await startScriptedNode((req, res) => {
    seen.push(String(req.headers['x-request-id']));
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      '{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}',
    );
  });
  gw = await startTestGateway([{ name: 'n', url: node.url }]);
});

after(async () => {
  await gw?.close();
  await node?.close();
});

async function send(model: string, id: string): Promise<{ status: number; id: unknown }> {
  const res = await request(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-request-id': id },
    body: JSON.stringify({ ...CHAT, model }),
    signal: AbortSignal.timeout(15_000),
  });
  await res.body.text();
  return { status: res.statusCode, id: res.headers['x-request-id'] };
}

test("the client's id is returned and sent to the node", async () => {
  for (const id of ['abc-123', '0af7651916cd43dd8448eb211c80319c', 'req_01HZX:7/2+=@x.y', 'x'.repeat(128)]) {
    const answer = await send('m', id);
    assert.equal(answer.status, 200);
    assert.equal(answer.id, id);
    assert.equal(seen.at(-1), id);
  }
});

test("a refusal returns the client's id too", async () => {
  const answer = await send('no-such-model', 'refused-1');
  assert.equal(answer.status, 404);
  assert.equal(answer.id, 'refused-1');
});
