// Issue 21, item 10: the gateway asks nodes for `identity`, and decoded gzip, zlib-wrapped deflate and
// br when a node compressed anyway; but a zstd answer was handed to the client still encoded (a
// coding it never asked for), and a raw-deflate answer (what many servers send as "deflate") became
// a 502 "does not decode". Now every coding undici knows is decoded, layered ones too, raw deflate is
// told from zlib-wrapped by its first bytes, and a coding the gateway cannot read ends in a 502 that
// names it: a client never gets bytes in a coding it did not accept.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync, zstdCompressSync } from 'node:zlib';
import { request } from 'undici';
import {
  chatAnswer,
  startScriptedNode,
  startTestGateway,
  type ScriptedNode,
  type TestGateway,
} from '#test/fixtures/scripted-node.ts';

const ANSWER = chatAnswer(2_000);
const SSE = 'data: {"choices":[{"delta":{"content":"a"}}]}\n\ndata: [DONE]\n\n';

/** The header a node sends, and how it encoded the body. */
const CODINGS: Record<string, { header: string; encode: (b: Buffer) => Buffer }> = {
  zstd: { header: 'zstd', encode: (b) => zstdCompressSync(b) },
  raw: { header: 'deflate', encode: (b) => deflateRawSync(b) },
  zlib: { header: 'deflate', encode: (b) => deflateSync(b) },
  layered: { header: 'gzip, zstd', encode: (b) => zstdCompressSync(gzipSync(b)) },
  xgzip: { header: 'x-gzip', encode: (b) => gzipSync(b) },
  brzstd: { header: 'br, zstd', encode: (b) => zstdCompressSync(brotliCompressSync(b)) },
  compress: { header: 'compress', encode: (b) => b },
  badzstd: { header: 'zstd', encode: () => Buffer.from('not a zstd frame at all') },
  badbr: { header: 'br', encode: () => Buffer.from('not a brotli stream at all') },
};

let node: ScriptedNode;
let gw: TestGateway;

before(async () => {
  node = await startScriptedNode((req, res, body) => {
    if (req.url !== '/v1/chat/completions') {
      res.writeHead(404).end();
      return;
    }
    const content = (JSON.parse(body.toString('utf8')) as { messages?: { content: string }[] }).messages?.[0]?.content ?? '';
    const [what, name] = content.split(':') as [string, string];
    const coding = CODINGS[name];
    if (coding === undefined) {
      res.writeHead(500).end();
      return;
    }
    const encoded = coding.encode(Buffer.from(what === 'sse' ? SSE : ANSWER));
    const type = what === 'sse' ? 'text/event-stream' : 'application/json';
    res
      .writeHead(200, { 'content-type': type, 'content-encoding': coding.header, 'content-length': encoded.length })
      .end(encoded);
  });
  gw = await startTestGateway([{ name: 'n', url: node.url }]);
});

after(async () => {
  await gw?.close();
  await node?.close();
});

function ask(content: string, stream = false) {
  return request(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    // What the official openai SDK sends: zstd is not among them.
    headers: { 'content-type': 'application/json', 'accept-encoding': 'gzip, deflate' },
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content }], stream }),
    headersTimeout: 20_000,
    bodyTimeout: 20_000,
  });
}

for (const name of ['zstd', 'raw', 'zlib', 'layered', 'xgzip', 'brzstd']) {
  test(`a ${name} (${CODINGS[name]?.header}) answer reaches the client decoded`, async () => {
    const res = await ask(`json:${name}`);
    const text = await res.body.text();
    assert.equal(res.statusCode, 200, text);
    assert.equal(res.headers['content-encoding'], undefined, 'no coding the client did not ask for');
    assert.equal(res.headers['content-length'], String(Buffer.byteLength(ANSWER)));
    assert.equal(text, ANSWER);
  });
}

for (const name of ['zstd', 'raw']) {
  test(`a ${name} event stream is decoded on the fly`, async () => {
    const res = await ask(`sse:${name}`, true);
    const text = await res.body.text();
    assert.equal(res.statusCode, 200, text);
    assert.equal(res.headers['content-encoding'], undefined);
    assert.equal(text, SSE);
  });
}

test('a coding the gateway cannot decode is a 502 that names it, never passed on', async () => {
  const res = await ask('json:compress');
  const text = await res.body.text();
  assert.equal(res.statusCode, 502, text);
  assert.equal(res.headers['content-encoding'], undefined);
  assert.match(text, /content-encoding \\"compress\\", which the gateway cannot decode/);
});

for (const name of ['badzstd', 'badbr']) {
  test(`a ${CODINGS[name]?.header} body that does not decode is a 502 that says so`, async () => {
    const res = await ask(`json:${name}`);
    const text = await res.body.text();
    assert.equal(res.statusCode, 502, text);
    assert.match(text, /compressed body does not decode/);
  });
}
