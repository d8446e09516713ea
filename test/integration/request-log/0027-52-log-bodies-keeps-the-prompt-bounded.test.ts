// Issue 27, `[log] bodies = true`: an operator debugging a tenant's requests had no way to see what
// was asked (an unknown key was an error). Now, off by default and documented as sensitive, the
// prompt's text goes into the request's line — and the Requests view's record — bounded by
// `bodies_max_bytes` (cut at a character boundary, marked `prompt_truncated`); never a key, the
// authorization header, or any other body field.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { answerChat, type TestGateway } from '#test/fixtures/scripted-node.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { linesOf, type LogLine, startLoggedGateway, type LoggedGateway } from '#test/fixtures/request-log-files.ts';
import { loadConfig } from '#src/config-tables.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { requestEnds } from '#test/fixtures/gateway-waits.ts';

let rig: LoggedGateway | undefined;
let logPath: string;
let gw: TestGateway;

before(async () => {
  rig = await startLoggedGateway({
    prefix: 'bodies',
    script: (_req, res) => answerChat(res, 'the-answer-text'),
    extra: (path) =>
      `[log]\nrequests = "${path}"\nbodies = true\nbodies_max_bytes = "40B"\n[[tenants]]\nname = "alice"\nkeys = ["sk-alice-secret"]`,
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

const chat = (id: string, body: Record<string, unknown>) =>
  httpJson('POST', `${gw.url}/v1/chat/completions`, body, { authorization: 'Bearer sk-alice-secret', 'x-request-id': id });

test('the prompt text is in the line, and in the Requests view record', async () => {
  const res = await chat('short-1', {
    model: 'm',
    messages: [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'hello ✓' },
    ],
    api_key: 'sk-body-secret',
  });
  assert.equal(res.status, 200);
  const line = await lineOf('short-1');
  assert.equal(line.prompt, 'be brief\nhello ✓');
  assert.equal(line.prompt_truncated, undefined);
  const text = JSON.stringify(line);
  for (const secret of ['sk-alice-secret', 'sk-body-secret', 'the-answer-text', 'authorization'])
    assert.ok(!text.includes(secret), `no ${secret} in the line`);
  const record = (await httpJson('GET', `${gw.url}/admin/requests?limit=1`)).json<{ requests: LogLine[] }>().requests[0];
  assert.equal(record?.prompt, 'be brief\nhello ✓');
});

test('a longer prompt is cut at the bound, at a character boundary, and marked', async () => {
  const long = `${'é'.repeat(30)}tail`;
  assert.equal((await chat('long-1', { model: 'm', messages: [{ role: 'user', content: long }] })).status, 200);
  const line = await lineOf('long-1');
  assert.equal(line.prompt_truncated, true);
  assert.equal(line.prompt, 'é'.repeat(20), '40 bytes of two-byte characters');
  assert.ok(Buffer.byteLength(String(line.prompt)) <= 40);
});

test('bodies is off by default, and a bad value names the key', () => {
  const plain = loadConfig('[[nodes]]\nname = "n"\nurl = "http://127.0.0.1:9"\n[log]\nrequests = "stdout"\n', {});
  assert.ok(plain.ok);
  assert.equal(plain.config.log?.bodies, false);
  const bad = loadConfig('[[nodes]]\nname = "n"\nurl = "http://127.0.0.1:9"\n[log]\nbodies = "yes"\n', {});
  assert.ok(!bad.ok);
  assert.ok(
    bad.problems.some((p) => p.path === 'log.bodies' && /true or false/.test(p.message)),
    JSON.stringify(bad.problems),
  );
});
