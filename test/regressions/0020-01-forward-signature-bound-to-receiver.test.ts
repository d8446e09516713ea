// Issue 20, item 1: a forward's signature was not bound to the site receiving it. verifyForward
// rebuilt the signed URL from the client's Host header, so a request site a signed for site b,
// sent to site c with `Host: <b's authority>`, was served by c; the same signed bytes were served
// again and again within max_clock_skew; `Host: <c>/v1/chat/completions#` let a chat signature
// authorize POST /v1/embeddings; and a site accepted forwards signed with its own key. Now c
// verifies against its own `[mesh] url` and the request line, a signature is good once (401
// `replayed`), a Host that is not host[:port] is a 400, and a site refuses its own signatures.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { signForward } from '#src/mesh/forwarding/index.ts';
import type { SiteKey } from '#src/mesh/site-key.ts';
import { httpJson, simRequests } from '#test/fixtures/http.ts';
import { chatBody } from '#test/fixtures/gateway-state.ts';
import { TwoSiteMesh } from '#test/fixtures/two-site-mesh.ts';
import { untilEvent } from '#test/fixtures/events.ts';

const mesh = new TwoSiteMesh({ heartbeatMs: 200, freshnessMs: 2_000 });

before(async () => {
  await mesh.start();
  const c = mesh.site('c').gw.url;
  await untilEvent(
    async () => (await httpJson('POST', `${c}/v1/chat/completions`, chatBody('m-c'))).status === 200,
    [...mesh.changes({ withLogs: false })],
    'c serves m-c',
  );
});
after(() => mesh.close());

interface Answer {
  readonly status: number;
  readonly code: string | undefined;
  readonly text: string;
}

/** POSTs `body` to `url`'s origin at `path`, with the headers as given (Host included, when set). */
function post(url: string, path: string, headers: Record<string, string>, body: Buffer): Promise<Answer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: hostname,
        port: Number(port),
        method: 'POST',
        path,
        headers: { 'content-type': 'application/json', ...headers, 'content-length': String(body.length) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let code: string | undefined;
          try {
            code = (JSON.parse(text) as { error?: { code?: string } }).error?.code;
          } catch {
            code = undefined;
          }
          resolve({ status: res.statusCode ?? 0, code, text });
        });
      },
    );
    req.setTimeout(30_000, () => req.destroy(new Error('no answer within 30 s')));
    req.on('error', reject);
    req.end(body);
  });
}

const sign = (url: string, body: Buffer, site: string, key: SiteKey): Promise<Record<string, string>> =>
  signForward({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json' },
    body,
    site,
    key,
    nowMs: Date.now(),
    lifetimeMs: 30_000,
  });

const inferenceAtC = async (path: string): Promise<number> =>
  (await simRequests(mesh.site('c').sim.url('c-gpu'))).filter((r) => r.path === path).length;

test('a request site a signed for site b is refused by site c, whatever Host says', async () => {
  const c = mesh.site('c').gw.url;
  const bAuthority = '127.0.0.1:9'; // site b: any other site's url
  const body = Buffer.from(JSON.stringify(chatBody('m-c')));
  const headers = await sign(`http://${bAuthority}/v1/chat/completions`, body, 'a', mesh.keys.a);
  const before = await inferenceAtC('/v1/chat/completions');
  const answer = await post(c, '/v1/chat/completions', { ...headers, host: bAuthority }, body);
  assert.equal(answer.status, 401, answer.text);
  assert.equal(answer.code, 'bad_signature', answer.text);
  assert.equal(await inferenceAtC('/v1/chat/completions'), before, 'c-gpu got nothing');
});

test('the same signed bytes sent four times reach the upstream once; the replays are 401 replayed', async () => {
  const c = mesh.site('c').gw.url;
  const body = Buffer.from(JSON.stringify(chatBody('m-c')));
  const headers = await sign(`${c}/v1/chat/completions`, body, 'a', mesh.keys.a);
  const before = await inferenceAtC('/v1/chat/completions');
  const answers: Answer[] = [];
  for (let i = 0; i < 4; i++) answers.push(await post(c, '/v1/chat/completions', headers, body));
  assert.deepEqual(
    answers.map((a) => a.status),
    [200, 401, 401, 401],
    answers.map((a) => a.text).join('\n'),
  );
  assert.deepEqual(
    answers.slice(1).map((a) => a.code),
    ['replayed', 'replayed', 'replayed'],
  );
  assert.equal((await inferenceAtC('/v1/chat/completions')) - before, 1, 'one upstream request');
});

test('a Host carrying path characters is refused; a chat signature never authorizes /v1/embeddings', async () => {
  const c = mesh.site('c').gw.url;
  const authority = new URL(c).host;
  const chat = Buffer.from(JSON.stringify({ model: 'm-c', input: 'hello' }));
  const headers = await sign(`${c}/v1/chat/completions`, chat, 'a', mesh.keys.a);
  const before = await inferenceAtC('/v1/embeddings');
  const smuggled = await post(c, '/v1/embeddings', { ...headers, host: `${authority}/v1/chat/completions#` }, chat);
  assert.equal(smuggled.status, 400, smuggled.text);
  assert.match(smuggled.text, /malformed Host header/);
  // With a plain Host the request line decides: the signature covers /v1/chat/completions only.
  const plain = await post(c, '/v1/embeddings', { ...headers, host: authority }, chat);
  assert.equal(plain.status, 401, plain.text);
  assert.equal(plain.code, 'bad_signature', plain.text);
  assert.equal(await inferenceAtC('/v1/embeddings'), before, 'c-gpu computed no embeddings');
});

test('a site refuses a forward signed with its own key', async () => {
  const c = mesh.site('c').gw.url;
  const body = Buffer.from(JSON.stringify(chatBody('m-c')));
  const before = await inferenceAtC('/v1/chat/completions');
  const answer = await post(c, '/v1/chat/completions', await sign(`${c}/v1/chat/completions`, body, 'c', mesh.keys.c), body);
  assert.equal(answer.status, 401, answer.text);
  assert.equal(answer.code, 'own_site', answer.text);
  assert.equal(await inferenceAtC('/v1/chat/completions'), before, 'c-gpu got nothing');
});
