// Issue 10, item 5: every non-streamed JSON answer could be held up to 4 MiB per request, even
// when its client was not reading (100 such clients: +400 MB RSS, and everyone else's p95 1.5 s).
// Held bytes now come from one budget shared by all requests ([upstream] max_held_bytes_total);
// an answer the budget cannot cover streams through unchecked, and every path gives its bytes back.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { eventually, httpJson } from '#test/fixtures/http.ts';
import { startScriptedNode, startTestGateway, type ScriptedNode, type TestGateway } from '#test/fixtures/scripted-node.ts';

const KIB = 1024;
/** Answers whose end waits for the test: the first bytes go out at once, the rest on release. */
const gates = new Map<string, () => void>();

let node: ScriptedNode;
let gw: TestGateway;

before(async () => {
  node = await startScriptedNode((_req, res, body) => {
    const content = (JSON.parse(body.toString('utf8')) as { messages: { content: string }[] }).messages[0]?.content ?? '';
    const [name, size] = content.split(':');
    res.writeHead(200, { 'content-type': 'application/json' });
    if (name === 'garbage') {
      res.end(`{"pad":"${'g'.repeat(10 * KIB)}`);
      return;
    }
    res.write(`{"pad":"${'x'.repeat(Number(size) * KIB)}`);
    gates.set(name ?? '', () => res.end('"}'));
  });
  gw = await startTestGateway(
    [{ name: 'n', url: node.url }],
    '[upstream]\nmax_held_body_bytes = "1MiB"\nmax_held_bytes_total = "256KiB"',
  );
});

after(async () => {
  for (const open of gates.values()) open();
  await gw?.close();
  await node?.close();
});

async function heldBytes(): Promise<number> {
  return (await httpJson('GET', `${gw.url}/admin/runtime`)).json<{ upstream_held_bytes: number }>().upstream_held_bytes;
}

function ask(content: string, headersTimeout = 20_000) {
  return request(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content }] }),
    headersTimeout,
    bodyTimeout: 20_000,
  });
}

test('an answer the shared budget cannot cover streams through instead of being held', async () => {
  const first = ask('first:200');
  await eventually(async () => (await heldBytes()) >= 200 * KIB, 10_000, 'the first answer held');
  // The first answer holds 200 KiB of the 256 KiB budget: the second cannot be held whole, so its
  // headers reach the client while the node is still sending it (a held one would wait for its end).
  const second = await ask('second:100', 10_000);
  assert.equal(second.statusCode, 200);
  assert.equal(second.headers['content-length'], undefined, 'streamed, not held');
  assert.ok((await heldBytes()) <= 256 * KIB, 'the budget is never exceeded');
  gates.get('second')?.();
  gates.get('first')?.();
  const [a, b] = [await (await first).body.json(), await second.body.json()] as { pad: string }[];
  assert.equal(a?.pad.length, 200 * KIB);
  assert.equal(b?.pad.length, 100 * KIB);
  await eventually(async () => (await heldBytes()) === 0, 10_000, 'every held byte given back');
});

test('a held answer that fails (not JSON) gives its bytes back too', async () => {
  const res = await httpJson('POST', `${gw.url}/v1/chat/completions`, {
    model: 'm',
    messages: [{ role: 'user', content: 'garbage' }],
  });
  assert.equal(res.status, 502, res.text);
  await eventually(async () => (await heldBytes()) === 0, 10_000, 'every held byte given back');
});
