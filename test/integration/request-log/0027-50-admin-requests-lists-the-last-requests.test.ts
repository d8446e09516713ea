// Issue 27, dashboard Requests view: an operator could see the fleet but not the requests it served.
// Now the gateway keeps the last finished requests in a bounded ring — the request log's record,
// kept whether or not [log] requests is on — and GET /admin/requests lists them newest first,
// filtered by model, node, tenant and status, each with its attempts and the routing decision each
// node attempt got (the policy, its reason, every candidate's score, every exclusion with why).
// GET /admin/access tells the page whether this caller may act (reload, wake, model load), and why not.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  answerChat,
  startScriptedNode,
  startTestGateway,
  type ScriptedNode,
  type TestGateway,
} from '#test/fixtures/scripted-node.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { nodeChanges, requestEnds } from '#test/fixtures/gateway-waits.ts';

interface Attempt {
  node?: string;
  outcome: string;
  status?: number;
  route?: {
    policy: string;
    reason: string;
    scores?: { node: string; score: number | null }[];
    excluded?: { node: string; code: string }[];
  };
}
interface Rec {
  seq: number;
  request_id: string;
  model?: string;
  node?: string;
  tenant?: string;
  status: number;
  refusal?: string;
  attempts: Attempt[];
}
interface Answer {
  requests: Rec[];
  latest: number;
  kept: number;
  capacity: number;
}

const nodes: ScriptedNode[] = [];
let gw: TestGateway;
const failedOnce = new Set<string>();

before(async () => {
  const script = (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse): void => {
    const id = String(req.headers['x-request-id'] ?? '');
    if (id.startsWith('fo-') && !failedOnce.has(id)) {
      failedOnce.add(id);
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end('{"error":{"message":"overloaded","type":"server_error"}}');
      return;
    }
    answerChat(res, 'ok', { prompt_tokens: 3, completion_tokens: 1 });
  };
  nodes.push(await startScriptedNode(script), await startScriptedNode(script));
  // No [log] requests: the ring is fed all the same.
  gw = await startTestGateway(
    nodes.map((n, i) => ({ name: `n${i + 1}`, url: n.url })),
    '[[tenants]]\nname = "alice"\nkeys = ["sk-alice"]\n[[tenants]]\nname = "bob"\nkeys = ["sk-bob"]',
  );
});

after(async () => {
  await gw?.close();
  for (const n of nodes) await n.close();
});

const chat = (model: string, id: string, key = 'sk-alice') =>
  httpJson(
    'POST',
    `${gw.url}/v1/chat/completions`,
    { model, messages: [{ role: 'user', content: 'hi' }] },
    { authorization: `Bearer ${key}`, 'x-request-id': id },
  );
const requests = async (query = ''): Promise<Answer> => {
  const res = await httpJson('GET', `${gw.url}/admin/requests${query}`);
  assert.equal(res.status, 200, res.text);
  return res.json<Answer>();
};

test('the last requests, newest first, each with its attempts and the routing decision with every score', async () => {
  assert.equal((await chat('m', 'ok-1')).status, 200);
  assert.equal((await chat('m', 'fo-1', 'sk-bob')).status, 200);
  assert.equal((await chat('nope', 'unknown-1')).status, 404);
  let answer: Answer = { requests: [], latest: 0, kept: 0, capacity: 0 };
  await untilEvent(
    async () => (answer = await requests()).requests.length >= 3,
    [requestEnds(gw), nodeChanges(gw)],
    'three records',
  );
  assert.deepEqual(
    answer.requests.slice(0, 3).map((r) => r.request_id),
    ['unknown-1', 'fo-1', 'ok-1'],
    'newest first',
  );
  assert.ok(answer.capacity >= 100 && answer.kept === answer.requests.length);
  const ok = answer.requests.find((r) => r.request_id === 'ok-1');
  assert.equal(ok?.status, 200);
  assert.equal(ok?.tenant, 'alice');
  const route = ok?.attempts[0]?.route;
  assert.ok(route !== undefined, 'the attempt carries its routing decision');
  assert.equal(typeof route.policy, 'string');
  assert.ok(route.reason.length > 0, 'why the node was chosen');
  assert.deepEqual(route.scores?.map((s) => s.node).sort(), ['n1', 'n2'], 'every candidate scored');
  const fo = answer.requests.find((r) => r.request_id === 'fo-1');
  assert.deepEqual(
    fo?.attempts.map((a) => a.outcome),
    ['http_5xx', 'success'],
  );
  const second = fo?.attempts[1]?.route;
  assert.deepEqual(
    second?.scores?.map((s) => s.node),
    [fo?.attempts[1]?.node],
    'the failover chose among the node not yet tried',
  );
  assert.deepEqual(
    second?.excluded?.map((e) => [e.node, e.code]),
    [[fo?.attempts[0]?.node, 'already_tried']],
    'the tried node excluded, with why',
  );
  const unknown = answer.requests.find((r) => r.request_id === 'unknown-1');
  assert.equal(unknown?.refusal, 'GW_MODEL_NOT_FOUND');
});

test('filters by model, node, tenant and status, and the cursor gives only newer requests', async () => {
  const all = await requests();
  assert.deepEqual(
    (await requests('?tenant=bob')).requests.map((r) => r.request_id),
    ['fo-1'],
  );
  assert.deepEqual(
    (await requests('?status=404')).requests.map((r) => r.request_id),
    ['unknown-1'],
  );
  assert.deepEqual(
    (await requests('?status=4xx')).requests.map((r) => r.request_id),
    ['unknown-1'],
  );
  assert.ok((await requests('?status=error')).requests.every((r) => r.status >= 400));
  assert.ok((await requests('?model=m')).requests.every((r) => r.model === 'm'));
  const fo = all.requests.find((r) => r.request_id === 'fo-1');
  const failedNode = fo?.attempts[0]?.node ?? '';
  assert.ok(
    (await requests(`?node=${failedNode}`)).requests.some((r) => r.request_id === 'fo-1'),
    'a node matches the requests it failed too',
  );
  assert.equal((await requests('?limit=1')).requests.length, 1);
  assert.deepEqual((await requests(`?after=${all.latest}`)).requests, [], 'nothing newer yet');
  assert.equal((await chat('m', 'ok-2')).status, 200);
  await untilEvent(
    async () => (await requests(`?after=${all.latest}`)).requests.length === 1,
    [requestEnds(gw), nodeChanges(gw)],
    'the newer one',
  );
  assert.equal((await requests(`?after=${all.latest}`)).requests[0]?.request_id, 'ok-2');
});

test('a bad query is refused naming the parameter', async () => {
  for (const [query, param] of [
    ['?limit=0', 'limit'],
    ['?limit=abc', 'limit'],
    ['?after=-1', 'after'],
    ['?status=teapot', 'status'],
  ] as const) {
    const res = await httpJson('GET', `${gw.url}/admin/requests${query}`);
    assert.equal(res.status, 400, query);
    assert.equal(res.json<{ error: { param: string } }>().error.param, param, query);
  }
});

test('GET /admin/access says whether this caller may act, and why not', async () => {
  assert.deepEqual((await httpJson('GET', `${gw.url}/admin/access`)).json(), { read: true, act: true });
  const proxied = (await httpJson('GET', `${gw.url}/admin/access`, undefined, { 'x-forwarded-for': '203.0.113.9' })).json<{
    act: boolean;
    why: string;
  }>();
  assert.equal(proxied.act, false);
  assert.match(proxied.why, /token/);
});
