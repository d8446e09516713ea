// Issue 10, item 14: odd answers from a node. A spontaneous `100 Continue` became a 502 and a node
// failure; a 200 `text/html` page (a captive portal) reached a non-streaming client as a 200; an odd
// status (999) was passed through; `set-cookie`, `location` and similar headers from nodes reached
// clients. Now: 100 is a clean failover that is not held against the node (undici cannot skip it;
// other 1xx are skipped), a 2xx that is neither JSON nor SSE and a status outside 200-599 are node
// failures (failover, 502 when no node is left), and origin-binding headers are dropped.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { upstreamVerdict } from '#src/proxy/failover/attempt-feedback.ts';
import { httpJson } from '#test/fixtures/http.ts';
import {
  chatAnswer,
  startScriptedNode,
  startTestGateway,
  type ScriptedNode,
  type TestGateway,
} from '#test/fixtures/scripted-node.ts';

/** Writes a raw HTTP answer on the connection and closes it. */
function raw(res: ServerResponse, text: string): void {
  res.socket?.end(text);
}

function rawJson(status: string, body: string): string {
  return `HTTP/1.1 ${status}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`;
}

function caseOf(body: Buffer): string {
  const json = JSON.parse(body.toString('utf8')) as { messages: { content: string }[] };
  return json.messages[0]?.content ?? '';
}

/** Node "a" answers `100 Continue` unasked before its answer; "b" does not. Both act out the rest. */
function scriptFor(interimFirst: boolean) {
  return (_req: unknown, res: ServerResponse, body: Buffer): void => {
    const answer = chatAnswer();
    switch (caseOf(body)) {
      case 'continue':
        raw(res, `${interimFirst ? 'HTTP/1.1 100 Continue\r\n\r\n' : ''}${rawJson('200 OK', answer)}`);
        return;
      case 'early-hints':
        raw(res, `HTTP/1.1 103 Early Hints\r\nlink: </x>; rel=preload\r\n\r\n${rawJson('200 OK', answer)}`);
        return;
      case 'portal':
        res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>Please log in</body></html>');
        return;
      case 'status-999':
        raw(res, rawJson('999 Odd', answer));
        return;
      case 'headers':
        res
          .writeHead(200, {
            'content-type': 'application/json',
            'set-cookie': 'session=node-secret; Path=/',
            'set-cookie2': 'old=1',
            location: 'http://10.0.0.5:8000/elsewhere',
            'content-location': 'http://10.0.0.5:8000/v1/x',
            refresh: '0; url=http://10.0.0.5/',
            'alt-svc': 'h3=":443"',
            'strict-transport-security': 'max-age=31536000',
            'x-node-extra': 'kept',
          })
          .end(answer);
        return;
      default:
        res.writeHead(200, { 'content-type': 'application/json' }).end(answer);
    }
  };
}

let a: ScriptedNode;
let b: ScriptedNode;
let gw: TestGateway;

before(async () => {
  a = await startScriptedNode(scriptFor(true));
  b = await startScriptedNode(scriptFor(false));
  gw = await startTestGateway([
    { name: 'a', url: a.url },
    { name: 'b', url: b.url },
  ]);
});

after(async () => {
  await gw?.close();
  await a?.close();
  await b?.close();
});

const ask = (content: string) =>
  httpJson('POST', `${gw.url}/v1/chat/completions`, { model: 'm', messages: [{ role: 'user', content }] });

async function attempts(node: string, result: string): Promise<number> {
  const text = (await httpJson('GET', `${gw.url}/metrics`)).text;
  const line = text
    .split('\n')
    .find(
      (l) => l.startsWith('gateway_upstream_attempts_total{') && l.includes(`node="${node}"`) && l.includes(`result="${result}"`),
    );
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
}

test('an unasked 100 Continue fails over cleanly and is not a failure of the node', async () => {
  for (let i = 0; i < 8 && (await attempts('a', 'interim_response')) === 0; i++) {
    const res = await ask('continue');
    assert.equal(res.status, 200, res.text);
  }
  assert.ok((await attempts('a', 'interim_response')) >= 1, 'node a was tried');
  assert.equal(await attempts('a', 'reset'), 0, 'not counted as a reset');
  assert.equal(upstreamVerdict('interim_response'), 'neutral', 'passive health ignores it');
});

test('a 103 Early Hints before the answer is skipped and the final answer used', async () => {
  const res = await ask('early-hints');
  assert.equal(res.status, 200, res.text);
  assert.equal(res.json<{ object: string }>().object, 'chat.completion');
});

test('a 200 text/html page (captive portal) is a node failure: 502 when no node is left', async () => {
  const res = await ask('portal');
  assert.equal(res.status, 502, res.text);
  assert.match(res.text, /text\/html/);
  assert.doesNotMatch(res.text, /Please log in/);
});

test('a status outside 200-599 is a node failure: 502 when no node is left', async () => {
  const res = await ask('status-999');
  assert.equal(res.status, 502, res.text);
  assert.match(res.text, /999/);
});

test('cookies, redirects and transport policy from a node do not reach the client', async () => {
  const res = await ask('headers');
  assert.equal(res.status, 200, res.text);
  for (const name of [
    'set-cookie',
    'set-cookie2',
    'location',
    'content-location',
    'refresh',
    'alt-svc',
    'strict-transport-security',
  ]) {
    assert.equal(res.headers[name], undefined, name);
  }
  assert.equal(res.headers['x-node-extra'], 'kept');
});
