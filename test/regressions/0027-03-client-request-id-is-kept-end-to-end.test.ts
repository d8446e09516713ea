// Issue 27, request id: the gateway replaced every client's `x-request-id` with one of its own, so
// a client could not find its request in the node's logs or the gateway's. Now a well-formed,
// bounded id from the client is kept: returned in the answer (a success and a refusal alike) and
// sent to the node; a malformed one (a space, a quote, a control character, over 128 characters)
// is replaced by a new one, the same in the answer and at the node.
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
    res.end('{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}');
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

test('a malformed or oversized id is replaced by one new id, the same in the answer and at the node', async () => {
  for (const bad of ['two words', 'a"b', 'x'.repeat(129), 'tab\there']) {
    const answer = await send('m', bad);
    assert.equal(answer.status, 200);
    assert.notEqual(answer.id, bad);
    assert.match(String(answer.id), /^[0-9a-f-]{36}$/);
    assert.equal(seen.at(-1), answer.id);
  }
});
