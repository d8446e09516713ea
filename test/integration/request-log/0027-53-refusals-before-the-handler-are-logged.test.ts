// Issue 27, request log: a request to an inference endpoint refused for its key (401) never reached
// the inference handler, so it had no line, no request id and no place in the Requests view — an
// operator hunting a client's failing calls saw nothing. Now it is reported like every other
// refusal: its line (status 401, refusal GW_UNAUTHORIZED, the client's id, never the key), the id
// returned. A body over the limit (413) and a tenant's limit (429) have their lines too.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { once } from 'node:events';
import { answerChat, type TestGateway } from '#test/fixtures/scripted-node.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { linesOf, type LogLine, startLoggedGateway, type LoggedGateway } from '#test/fixtures/request-log-files.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { requestEnds } from '#test/fixtures/gateway-waits.ts';

let rig: LoggedGateway | undefined;
let logPath: string;
let gw: TestGateway;

before(async () => {
  rig = await startLoggedGateway({
    prefix: 'early',
    script: (_req, res) => answerChat(res),
    extra: (path) =>
      `[log]\nrequests = "${path}"\n[[tenants]]\nname = "alice"\nkeys = ["sk-alice"]\n[[tenants]]\nname = "once"\nkeys = ["sk-once"]\nrequests_per_minute = 1`,
    adjust: (config) => ({ ...config, server: { ...config.server, maxRequestBodyBytes: 1024 } }),
  });
  ({ logPath, gw } = rig);
});

after(() => rig?.close());

async function lineOf(id: string): Promise<LogLine> {
  let found: LogLine | undefined;
  await untilEvent(
    async () => {
      await gw.gateway.requestLogFlushed();
      found = (await linesOf(logPath)).find((l) => l.request_id === id);
      return found !== undefined;
    },
    [requestEnds(gw)],
    `the line of ${id}`,
  );
  return found ?? assert.fail('no line');
}

const chat = (id: string, key: string, content = 'hi') =>
  httpJson(
    'POST',
    `${gw.url}/v1/chat/completions`,
    { model: 'm', messages: [{ role: 'user', content }] },
    { authorization: `Bearer ${key}`, 'x-request-id': id },
  );

test('a wrong key on an inference route: 401 with its id, and a line', async () => {
  const res = await chat('bad-key-1', 'sk-wrong-secret');
  assert.equal(res.status, 401);
  assert.equal(res.headers['x-request-id'], 'bad-key-1');
  const line = await lineOf('bad-key-1');
  assert.equal(line.status, 401);
  assert.equal(line.refusal, 'GW_UNAUTHORIZED');
  assert.equal(line.endpoint, '/v1/chat/completions');
  assert.deepEqual(line.attempts, []);
  assert.equal(line.tenant, undefined);
  assert.ok(!JSON.stringify(line).includes('sk-wrong-secret'), 'never the key');
  const listed = (await httpJson('GET', `${gw.url}/admin/requests?status=401`)).json<{ requests: LogLine[] }>().requests;
  assert.deepEqual(
    listed.map((r) => r.request_id),
    ['bad-key-1'],
    'in the Requests view too',
  );
});

test('a body over the limit (413) and a tenant over its limit (429) have their lines', async () => {
  assert.equal((await chat('big-1', 'sk-alice', 'x'.repeat(4096))).status, 413);
  assert.equal((await lineOf('big-1')).status, 413);
  assert.equal((await lineOf('big-1')).refusal, 'GW_BODY_TOO_LARGE');
  assert.equal((await chat('once-1', 'sk-once')).status, 200);
  assert.equal((await chat('once-2', 'sk-once')).status, 429);
  const limited = await lineOf('once-2');
  assert.equal(limited.status, 429);
  assert.equal(limited.tenant, 'once');
});

// Issue 43 item 8: a 413's line said bytes_in 0. It now says how large the body was as far as the
// gateway knows: the declared Content-Length when that alone refused it (nothing was read yet),
// else the bytes read before the limit (1024 here) stopped the read.
test('a 413 records the body it refused: the declared length, or the bytes read until the limit', async () => {
  const body = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x'.repeat(4096) }] });
  const declared = await httpJson('POST', `${gw.url}/v1/chat/completions`, body, {
    authorization: 'Bearer sk-alice',
    'x-request-id': 'big-declared',
    'content-type': 'application/json',
  });
  assert.equal(declared.status, 413);
  assert.equal((await lineOf('big-declared')).bytes_in, Buffer.byteLength(body), 'the declared Content-Length');

  // No Content-Length (chunked): the gateway reads until the limit, then refuses.
  const req = httpRequest(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: 'Bearer sk-alice', 'x-request-id': 'big-chunked', 'content-type': 'application/json' },
  });
  const answered = once(req, 'response');
  req.write('x'.repeat(700));
  req.write('x'.repeat(700));
  req.end('x'.repeat(700));
  const [res] = (await answered) as [import('node:http').IncomingMessage];
  res.resume();
  assert.equal(res.statusCode, 413);
  assert.equal(req.getHeader('content-length'), undefined, 'sent chunked');
  const bytesIn = Number((await lineOf('big-chunked')).bytes_in);
  assert.ok(bytesIn > 1024 && bytesIn <= 2100, `bytes read before the limit stopped the read: ${bytesIn}`);
});
