// Issue 27, request log: nothing recorded the requests an operator's gateway served. Now
// `[log] requests = PATH` writes one JSON line per request as it ends — its id (the client's
// x-request-id when well-formed, else a new one, returned and sent to the node), tenant, endpoint,
// requested and served model, node, every attempt and its outcome, queue wait, first byte, first
// token, inter-token gap, duration, status, tokens, bytes, and a refusal's code — never the prompt
// or a key. Here: a streamed request, a failed-over one, refusals (404 unknown model, 429 tenant
// limit), a malformed client id, and a request forwarded to another site (logged at both sites).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { answerChat, type TestGateway } from '#test/fixtures/scripted-node.ts';
import { TwoSiteMesh } from '#test/fixtures/two-site-mesh.ts';
import { eventually } from '#test/fixtures/http.ts';
import { linesOf, type LogLine, startLoggedGateway, type LoggedGateway } from '#test/fixtures/request-log-files.ts';

const SECRET_PROMPT = 'the-secret-prompt-text';
const WORDS = ['one', ' two', ' three', ' four'];
const chunk = (word: string): string =>
  `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":${JSON.stringify(word)}},"finish_reason":null}]}\n\n`;
const USAGE =
  'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":7,"completion_tokens":4,"total_tokens":11}}\n\n';

let rig: LoggedGateway | undefined;
let logPath: string;
let gw: TestGateway;
/** The x-request-id each node was sent, in order. */
const seenIds: string[] = [];
/** Request ids already answered 503 once (a failover test's first attempt fails, whichever node it reaches). */
const failedOnce = new Set<string>();

function script(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse, body: Buffer): void {
  const id = String(req.headers['x-request-id'] ?? '');
  seenIds.push(id);
  if (id.startsWith('fo-') && !failedOnce.has(id)) {
    failedOnce.add(id);
    res.writeHead(503, { 'content-type': 'application/json' });
    res.end('{"error":{"message":"overloaded","type":"server_error"}}');
    return;
  }
  const json = JSON.parse(body.toString('utf8')) as { stream?: boolean };
  if (json.stream !== true) {
    answerChat(res, 'ok', { prompt_tokens: 7, completion_tokens: 1 });
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const parts = [...WORDS.map(chunk), USAGE, 'data: [DONE]\n\n'];
  const next = (): void => {
    const part = parts.shift();
    if (part === undefined) {
      res.end();
      return;
    }
    res.write(part, () => setTimeout(next, 5));
  };
  next();
}

before(async () => {
  rig = await startLoggedGateway({
    prefix: 'reqlog',
    script,
    count: 2,
    extra: (path) =>
      [
        `[log]\nrequests = "${path}"`,
        '[[tenants]]\nname = "alice"\nkeys = ["sk-alice"]',
        '[[tenants]]\nname = "limited"\nkeys = ["sk-limited"]\nrequests_per_minute = 1',
      ].join('\n'),
  });
  ({ logPath, gw } = rig);
});

after(() => rig?.close());

async function chat(
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<{ status: number; id: string | undefined; text: string }> {
  const res = await request(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-alice', ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.body.text();
  const id = res.headers['x-request-id'];
  return { status: res.statusCode, id: typeof id === 'string' ? id : undefined, text };
}

/** The line of request `id`, once the gateway has written it. */
async function lineOf(path: string, id: string, flushed: () => Promise<void>): Promise<LogLine> {
  let found: LogLine | undefined;
  await eventually(
    async () => {
      await flushed();
      found = (await linesOf(path)).find((l) => l.request_id === id);
      return found !== undefined;
    },
    15_000,
    `the line of ${id}`,
  );
  return found ?? assert.fail('no line');
}
const line = (id: string): Promise<LogLine> => lineOf(logPath, id, () => gw.gateway.requestLogFlushed());

const messages = [{ role: 'user', content: SECRET_PROMPT }];

test("a streamed request: the client's id returned and sent to the node, and every figure in its line", async () => {
  const answer = await chat({ model: 'm', messages, stream: true }, { 'x-request-id': 'client-id-1' });
  assert.equal(answer.status, 200);
  assert.equal(answer.id, 'client-id-1', 'the client gets its own id back');
  assert.ok(seenIds.includes('client-id-1'), 'the node was sent the same id');
  const l = await line('client-id-1');
  assert.match(String(l.time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/, 'UTC ISO-8601');
  assert.equal(l.tenant, 'alice');
  assert.equal(l.endpoint, '/v1/chat/completions');
  assert.equal(l.model_requested, 'm');
  assert.equal(l.model, 'm');
  assert.ok(l.node === 'n1' || l.node === 'n2');
  assert.deepEqual(l.attempts, [{ node: l.node, outcome: 'success', status: 200 }]);
  assert.equal(l.status, 200);
  assert.equal(l.queue_wait_ms, 0);
  for (const key of ['first_byte_ms', 'first_token_ms', 'inter_token_ms', 'duration_ms'])
    assert.equal(typeof l[key], 'number', key);
  assert.ok(Number(l.first_token_ms) <= Number(l.duration_ms));
  assert.equal(l.prompt_tokens, 7);
  assert.equal(l.completion_tokens, 4);
  assert.equal(l.tokens_from, 'usage');
  assert.equal(l.bytes_in, Buffer.byteLength(JSON.stringify({ model: 'm', messages, stream: true })));
  assert.ok(Number(l.bytes_out) > answer.text.length, 'head and body');
  assert.equal(l.refusal, undefined);
  const text = JSON.stringify(l);
  assert.ok(!text.includes(SECRET_PROMPT) && !text.includes('sk-alice'), 'no prompt text, no key');
});

test('a failed-over request lists both attempts, the failed one with its outcome', async () => {
  const answer = await chat({ model: 'm', messages }, { 'x-request-id': 'fo-1' });
  assert.equal(answer.status, 200);
  const l = await line('fo-1');
  const attempts = l.attempts as { node: string; outcome: string; status?: number }[];
  assert.equal(attempts.length, 2);
  assert.deepEqual(
    attempts.map((a) => [a.outcome, a.status]),
    [
      ['http_5xx', 503],
      ['success', 200],
    ],
  );
  assert.notEqual(attempts[0]?.node, attempts[1]?.node);
  assert.equal(l.node, attempts[1]?.node);
  assert.equal(l.status, 200);
  assert.equal(l.completion_tokens, 1);
});

test("a refusal: an unknown model's 404 and a tenant's 429 carry their codes and no node", async () => {
  const unknown = await chat({ model: 'no-such-model', messages }, { 'x-request-id': 'unknown-1' });
  assert.equal(unknown.status, 404);
  assert.equal(unknown.id, 'unknown-1');
  const l404 = await line('unknown-1');
  assert.equal(l404.status, 404);
  assert.equal(l404.refusal, 'GW_MODEL_NOT_FOUND');
  assert.equal(l404.model_requested, 'no-such-model');
  assert.deepEqual(l404.attempts, []);
  assert.equal(l404.node, undefined);

  assert.equal(
    (await chat({ model: 'm', messages }, { authorization: 'Bearer sk-limited', 'x-request-id': 'lim-1' })).status,
    200,
  );
  const limited = await chat({ model: 'm', messages }, { authorization: 'Bearer sk-limited', 'x-request-id': 'lim-2' });
  assert.equal(limited.status, 429);
  assert.equal(limited.id, 'lim-2');
  const l429 = await line('lim-2');
  assert.equal(l429.tenant, 'limited');
  assert.equal(l429.status, 429);
  assert.equal(l429.refusal, 'GW_RATE_LIMITED');
  assert.deepEqual(l429.attempts, []);
});

test('a malformed or oversized client id is replaced by a new one, returned, sent to the node and logged', async () => {
  for (const bad of ['has space', 'x'.repeat(129), 'quote"d']) {
    const answer = await chat({ model: 'm', messages }, { 'x-request-id': bad });
    assert.equal(answer.status, 200);
    assert.ok(answer.id !== undefined && answer.id !== bad, `replaced: ${bad}`);
    assert.match(answer.id, /^[0-9a-f-]{36}$/);
    assert.equal(seenIds.at(-1), answer.id, 'the node got the new id');
    assert.equal((await line(answer.id)).status, 200);
  }
});

test('a forwarded request is logged at both sites under one id: the sending site names the site, the serving one where it came from', async () => {
  const siteDir = await mkdtemp(join(tmpdir(), 'switchyard-reqlog-mesh-'));
  const paths = { a: join(siteDir, 'a.log'), c: join(siteDir, 'c.log') };
  const mesh = new TwoSiteMesh({
    heartbeatMs: 200,
    freshnessMs: 2_000,
    extraToml: { a: `[log]\nrequests = "${paths.a}"`, c: `[log]\nrequests = "${paths.c}"` },
  });
  try {
    await mesh.start();
    await mesh.waitListed('a', 'm-c', 'c');
    await mesh.waitServed('a', 'm-c');
    const res = await request(`${mesh.site('a').gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': 'fwd-1' },
      body: JSON.stringify({ model: 'm-c', messages: [{ role: 'user', content: SECRET_PROMPT }], max_tokens: 3 }),
      signal: AbortSignal.timeout(15_000),
    });
    await res.body.text();
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['x-request-id'], 'fwd-1');
    const atA = await lineOf(paths.a, 'fwd-1', () => mesh.site('a').gw.gateway.requestLogFlushed());
    assert.equal(atA.site, 'c');
    assert.equal(atA.node, undefined);
    assert.deepEqual(atA.attempts, [{ site: 'c', outcome: 'success', status: 200 }]);
    assert.equal(atA.model, 'm-c');
    const atC = await lineOf(paths.c, 'fwd-1', () => mesh.site('c').gw.gateway.requestLogFlushed());
    assert.equal(atC.from_site, 'a');
    assert.equal(atC.node, 'c-gpu');
    assert.equal(atC.status, 200);
    assert.ok(!JSON.stringify([atA, atC]).includes(SECRET_PROMPT));
  } finally {
    await mesh.close();
    await rm(siteDir, { recursive: true, force: true });
  }
});
