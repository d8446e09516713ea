// Issue 41 item 4 against a real llama-server router (runs only when LLAMA_SERVER_BIN and
// LLAMA_MODELS_DIR are set): a streamed chat completion sent through the gateway with
// X-Conversation-Id, whose client drops after its first bytes, is reattached through the gateway
// with `GET /v1/stream?conv_id=&from=N` (N = the bytes it got): what it got plus the replay is byte
// for byte the router's whole stream (`from=0`). Another tenant's GET is the gateway's 404; the
// lookup through the gateway is the router's entry; DELETE reaches the router (204) and the router
// forgets the stream. The router's own answers are written to stderr (`router capture:`) for
// docs/protocols.md §7.z4.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import type { GatewayUnderTest } from '#test/fixtures/in-process-fleet.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { realRouterSkip, type RealRouter } from '#test/fixtures/real-llama-router.ts';
import { startTenantRouterGateway, type TenantRouterRig } from '#test/fixtures/real-router-tenants.ts';

const skip = realRouterSkip;
const A_KEY = 'sk-real-resume-a';
const B_KEY = 'sk-real-resume-b';
const auth = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` });
const CONV = `real-conv-${process.pid}`;

let router: RealRouter | undefined;
let gw: GatewayUnderTest | undefined;
let ids: string[] = [];

let rig: TenantRouterRig | undefined;

before(async () => {
  if (skip !== false) return;
  rig = await startTenantRouterGateway({ a: A_KEY, b: B_KEY }, '120s');
  ({ router, gw, ids } = rig);
});

after(async () => {
  await rig?.close();
});

const capture = (what: string, status: number, body: string): void => {
  process.stderr.write(`router capture: ${what} → ${status} ${body.slice(0, 400)}\n`);
};

async function replay(base: string, from: number | string, key = A_KEY): Promise<{ status: number; bytes: Buffer }> {
  const answer = await request(`${base}/v1/stream?conv_id=${encodeURIComponent(CONV)}&from=${from}`, {
    headers: auth(key),
    headersTimeout: 120_000,
    bodyTimeout: 120_000,
  });
  return { status: answer.statusCode, bytes: Buffer.from(await answer.body.arrayBuffer()) };
}

test('a stream whose client dropped is reattached through the gateway byte-exact on a real router', { skip }, async () => {
  assert.ok(gw !== undefined && router !== undefined);
  const [first] = ids as [string];
  const controller = new AbortController();
  const answer = await request(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-conversation-id': CONV, ...auth(A_KEY) },
    body: JSON.stringify({
      model: first,
      messages: [{ role: 'user', content: 'Count from one to fifty.' }],
      max_tokens: 128,
      stream: true,
    }),
    signal: controller.signal,
    headersTimeout: 120_000,
  });
  assert.equal(answer.statusCode, 200);
  const got = await new Promise<Buffer>((resolve, reject) => {
    answer.body.once('data', (chunk: Buffer) => resolve(chunk));
    answer.body.on('error', reject);
  });
  answer.body.on('error', () => {});
  controller.abort();

  const rest = await replay(gw.url, got.length);
  assert.equal(rest.status, 200, rest.bytes.toString());
  const whole = await replay(gw.url, 0);
  assert.equal(whole.status, 200);
  assert.equal(Buffer.compare(Buffer.concat([got, rest.bytes]), whole.bytes), 0, 'got + replay = the whole stream');
  capture(
    `GET /v1/stream from=0 (${whole.bytes.length} bytes; the client got ${got.length})`,
    whole.status,
    whole.bytes.toString('utf8'),
  );
  const direct = await replay(router.url, 0);
  assert.equal(Buffer.compare(direct.bytes, whole.bytes), 0, 'the router replays the same bytes asked directly');

  const other = await httpJson('GET', `${gw.url}/v1/stream?conv_id=${CONV}&from=0`, undefined, auth(B_KEY));
  assert.equal(other.status, 404);

  const looked = await httpJson('POST', `${gw.url}/v1/streams/lookup`, { conversation_ids: [CONV, 'nobody'] }, auth(A_KEY));
  assert.equal(looked.status, 200, looked.text);
  capture('POST /v1/streams/lookup (through the gateway)', looked.status, looked.text);
  const entries = looked.json<{ conversation_id: string; is_done: boolean; total_bytes: number }[]>();
  assert.equal(entries.length, 1);
  assert.equal(entries[0]?.conversation_id, CONV);
  assert.equal(entries[0]?.total_bytes, whole.bytes.length);

  for (const [what, path, method, body] of [
    ['GET unknown conv', '/v1/stream?conv_id=nobody&from=0', 'GET', undefined],
    ['GET from=abc', `/v1/stream?conv_id=${CONV}&from=abc`, 'GET', undefined],
    ['GET no conv_id', '/v1/stream', 'GET', undefined],
    ['lookup body not JSON', '/v1/streams/lookup', 'POST', 'nope'],
    ['DELETE unknown conv', '/v1/stream?conv_id=nobody', 'DELETE', undefined],
  ] as const) {
    const said = await httpJson(method, `${router.url}${path}`, body);
    capture(what, said.status, said.text);
  }
  const stop = await httpJson('DELETE', `${gw.url}/v1/stream?conv_id=${CONV}`, undefined, auth(A_KEY));
  assert.equal(stop.status, 204);
  const gone = await replay(gw.url, 0);
  capture('GET after DELETE (through the gateway)', gone.status, gone.bytes.toString());
  assert.equal(gone.status, 404);
});
