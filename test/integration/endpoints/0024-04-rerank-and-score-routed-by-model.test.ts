// Issue 24, rerank and score: `/v1/rerank`, `/rerank`, `/v2/rerank`, `/v1/score` and `/score` were
// not routes of the gateway (404 from its table). Now each is routed by `model` to a node whose kind
// serves it (vLLM all five, llama-server `/rerank` and `/v1/rerank`, SGLang `/v1/rerank`), a node
// lacking it excluded with its reason (by kind, or learned from its route-level 404), failed over
// before the first byte, refused by the context guard when the longest (query, document) pair
// cannot fit (many short documents are not summed), counted by endpoint, and the node's bytes
// reach the client as they are, with only the model's value rewritten in the request.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { startFleetAndGateway, type FleetAndGateway } from '#test/fixtures/in-process-fleet.ts';
import { startInProcessGateway } from '#test/fixtures/in-process.ts';
import { startScriptedNode } from '#test/fixtures/scripted-node.ts';
import { setSimFaults, simRequests } from '#test/fixtures/http.ts';
import { untilListed } from '#test/fixtures/gateway-waits.ts';

const FLEET = `
[[node]]
name = "vr1"
kind = "vllm"
ttft = "1ms"
context = 256
models = ["bge-reranker"]

[[node]]
name = "vr2"
kind = "vllm"
ttft = "1ms"
context = 256
models = ["bge-reranker"]

[[node]]
name = "lr"
kind = "llamacpp"
ttft = "1ms"
context = 256
models = ["bge-reranker"]

[[node]]
name = "sg"
kind = "sglang"
ttft = "1ms"
context = 256
models = ["bge-reranker"]
`;

let env: FleetAndGateway;

before(async () => {
  env = await startFleetAndGateway(FLEET, (sim) =>
    [
      '[server]\nlisten = "127.0.0.1:0"\ndrain_timeout = "0s"',
      '[health]\ninterval = "200ms"\ntimeout = "5s"',
      '[discovery]\ninterval = "30s"\ntimeout = "5s"',
      '[routing]\npolicy = "round-robin"\ntokenize_timeout = "10s"',
      ...sim.nodes.map((n) => `[[nodes]]\nname = "${n.name}"\nurl = "${n.url}"\nkind = "${n.kind}"`),
    ].join('\n'),
  );
  await untilListed(env.gw, 4, 'every node listed');
});

after(async () => {
  await env?.close();
});

async function post(
  path: string,
  body: unknown,
): Promise<{ status: number; node: string | undefined; json: Record<string, unknown> }> {
  const res = await request(`${env.gw.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(20_000),
  });
  const node = res.headers['x-switchyard-node'];
  return {
    status: res.statusCode,
    node: typeof node === 'string' ? node : undefined,
    json: (await res.body.json()) as Record<string, unknown>,
  };
}

const RERANK = {
  model: 'bge-reranker',
  query: 'what is a panda',
  documents: ['hi there', 'the giant panda is a bear', 'what a day'],
  top_n: 2,
};
const asked = async (node: string, path: string): Promise<number> =>
  (await simRequests(env.sim.url(node))).filter((r) => r.path === path).length;

test('rerank is routed by model to nodes that serve it; each answers in its own shape, best first', async () => {
  const seen = new Set<string>();
  for (let i = 0; i < 8; i += 1) {
    const { status, node, json } = await post('/v1/rerank', RERANK);
    assert.equal(status, 200, JSON.stringify(json));
    assert.ok(node !== undefined && node !== 'sg', `answered by ${String(node)}`);
    seen.add(node);
    const results = json.results as { index: number; relevance_score: number }[];
    assert.equal(results.length, 2, 'top_n');
    assert.equal(results[0]?.index, 1, 'the relevant document first');
    assert.ok((results[0]?.relevance_score ?? 0) > (results[1]?.relevance_score ?? 1));
  }
  assert.deepEqual([...seen].sort(), ['lr', 'vr1', 'vr2']);
  // SGLang's kind serves /v1/rerank, but this server answered FastAPI's route-level 404: learned, failed over, not asked again.
  assert.equal(await asked('sg', '/v1/rerank'), 1);
  const sg = (await env.gw.explain('model=bge-reranker&endpoint=/v1/rerank')).nodes.find((n) => n.node === 'sg');
  assert.equal(sg?.reason, 'endpoint_unsupported');
  assert.match(String(sg?.detail), /route-level 404/);
});

test('/v2/rerank and score go to vLLM only: the others are excluded by kind, with the reason', async () => {
  for (const path of ['/v2/rerank', '/rerank']) {
    const { status, node } = await post(path, RERANK);
    assert.equal(status, 200, path);
    if (path === '/v2/rerank') assert.ok(node === 'vr1' || node === 'vr2', `${path}: ${String(node)}`);
  }
  for (const path of ['/v1/score', '/score']) {
    const { status, node, json } = await post(path, { model: 'bge-reranker', text_1: 'a panda', text_2: ['the panda', 'a cat'] });
    assert.equal(status, 200, JSON.stringify(json));
    assert.ok(node === 'vr1' || node === 'vr2', `${path}: ${String(node)}`);
    const data = json.data as { index: number; object: string; score: number }[];
    assert.deepEqual(
      data.map((d) => [d.index, d.object]),
      [
        [0, 'score'],
        [1, 'score'],
      ],
    );
  }
  const explained = await env.gw.explain('model=bge-reranker&endpoint=/v1/score');
  const lr = explained.nodes.find((n) => n.node === 'lr');
  assert.equal(lr?.reason, 'endpoint_unsupported');
  assert.match(String(lr?.detail), /its kind \(llamacpp\) does not serve POST \/v1\/score/);
  assert.equal(await asked('lr', '/v1/score'), 0, 'never asked');
});

test('failover before the first byte: a node answering 500 is passed over', async () => {
  await setSimFaults(env.sim.url('vr1'), { inference: 'error500' });
  try {
    for (let i = 0; i < 4; i += 1) {
      const { status, node } = await post('/v1/score', { model: 'bge-reranker', text_1: 'a', text_2: 'b' });
      assert.equal(status, 200);
      assert.equal(node, 'vr2');
    }
    assert.match(await env.gw.metrics(), /gateway_upstream_attempts_total\{node="vr1",result="http_5xx"\} [1-9]/);
  } finally {
    await setSimFaults(env.sim.url('vr1'), { inference: 'none' });
  }
});

test('the context guard sizes the longest pair: too long is refused before any node is asked, many short documents are not', async () => {
  const before = (await Promise.all(['vr1', 'vr2', 'lr'].map((n) => asked(n, '/v1/rerank')))).reduce((a, b) => a + b, 0);
  const long = Array.from({ length: 3000 }, (_, i) => `word${i}`).join(' ');
  const refused = await post('/v1/rerank', { model: 'bge-reranker', query: 'q', documents: ['short', long] });
  assert.equal(refused.status, 400);
  const error = refused.json.error as { code?: string; message?: string };
  assert.equal(error.code, 'context_length_exceeded', JSON.stringify(refused.json));
  const after = (await Promise.all(['vr1', 'vr2', 'lr'].map((n) => asked(n, '/v1/rerank')))).reduce((a, b) => a + b, 0);
  assert.equal(after, before, 'no node asked');
  const many = await post('/v1/rerank', {
    model: 'bge-reranker',
    query: 'panda',
    documents: Array.from({ length: 200 }, (_, i) => `document ${i} about a panda`),
  });
  assert.equal(many.status, 200, JSON.stringify(many.json).slice(0, 300));
});

test('counted in metrics by endpoint', async () => {
  const metrics = await env.gw.metrics();
  for (const endpoint of ['/v1/rerank', '/v2/rerank', '/rerank', '/v1/score', '/score']) {
    assert.match(metrics, new RegExp(`gateway_endpoint_requests_total\\{endpoint="${endpoint}",status="200"\\} [1-9]`), endpoint);
  }
  assert.match(metrics, /gateway_endpoint_requests_total\{endpoint="\/v1\/rerank",status="400"\} 1/);
});

test('byte-exact: the node’s answer reaches the client as sent, the request changed only in its model', async () => {
  const answer =
    '{ "id":"rerank-1",  "results":[{"index":0,"relevance_score":0.98765432109876543},{"index":1,"relevance_score":1e-7}] ,"usage":{"total_tokens":9}}';
  const seen: { body?: string; path?: string } = {};
  const node = await startScriptedNode((req, res, body) => {
    seen.body = body.toString('utf8');
    seen.path = req.url;
    res.writeHead(200, { 'content-type': 'application/json' }).end(answer);
  });
  const toml = [
    '[server]\nlisten = "127.0.0.1:0"\ndrain_timeout = "0s"',
    '[health]\ninterval = "1s"',
    '[models]\n[[models.available]]\nname = "m"\naliases = ["rr"]',
    `[[nodes]]\nname = "proxy"\nurl = "${node.url}"\nkind = "openai"\nendpoints = ["/v1/chat/completions", "/v1/rerank"]`,
  ].join('\n');
  let gw: Awaited<ReturnType<typeof startInProcessGateway>> | undefined;
  try {
    gw = await startInProcessGateway(toml);
    assert.ok(await gw.gateway.firstRoundDone(15_000));
    const sent = '{"model" :"rr","query":"q\\u00e9", "documents":["a","b"],"top_n":12345678901234567890}';
    const res = await request(`${gw.url}/v1/rerank`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: sent,
      signal: AbortSignal.timeout(20_000),
    });
    assert.equal(res.statusCode, 200);
    assert.equal(await res.body.text(), answer);
    assert.equal(seen.path, '/v1/rerank');
    assert.equal(seen.body, sent.replace('"rr"', '"m"'));
    // /v1/score is not in its list: refused without asking it, naming why.
    const score = await request(`${gw.url}/v1/score`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"model":"m","text_1":"a","text_2":"b"}',
      signal: AbortSignal.timeout(20_000),
    });
    assert.equal(score.statusCode, 404);
    const refusal = (await score.body.json()) as { error: { code: string; message: string } };
    assert.equal(refusal.error.code, 'endpoint_unsupported');
    assert.match(refusal.error.message, /serves POST \/v1\/score/);
  } finally {
    await gw?.close();
    await node.close();
  }
});

test('a llama-server router takes rerank for an unloaded model: it loads it, as it does for chat', async () => {
  const routerFleet = `
[[node]]
name = "router"
kind = "llamacpp-router"
ttft = "1ms"
load_time = "20ms"

[[node.model]]
id = "rr"
status = "unloaded"
`;
  const routed = await startFleetAndGateway(routerFleet, (sim) =>
    [
      '[server]\nlisten = "127.0.0.1:0"\ndrain_timeout = "0s"',
      '[health]\ninterval = "200ms"\ntimeout = "5s"',
      ...sim.nodes.map((n) => `[[nodes]]\nname = "${n.name}"\nurl = "${n.url}"\nkind = "llamacpp"`),
    ].join('\n'),
  );
  try {
    await untilListed(routed.gw, 1, 'the router listed');
    const res = await request(`${routed.gw.url}/rerank`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'rr', query: 'panda', documents: ['cat', 'panda'] }),
      signal: AbortSignal.timeout(20_000),
    });
    assert.equal(res.statusCode, 200);
    const json = (await res.body.json()) as { object: string; results: { index: number }[] };
    assert.equal(json.object, 'list');
    assert.equal(json.results[0]?.index, 1);
  } finally {
    await routed.close();
  }
});
