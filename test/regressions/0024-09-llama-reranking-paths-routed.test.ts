// Issue 24, item 3: llama-server names its rerank handler at four paths (tools/server/server.cpp:
// `/rerank`, `/reranking`, `/v1/rerank`, `/v1/reranking`); the gateway routed only the first and
// third, so a client of the other two (TEI-style and older llama.cpp docs) got the gateway's 404.
// Now both are routed by model like `/rerank`, only to nodes whose kind serves them (a vLLM
// listing the same model is excluded with `endpoint_unsupported`).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startFleetAndGateway, type FleetAndGateway } from '#test/fixtures/in-process-fleet.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { untilListed } from '#test/fixtures/gateway-waits.ts';

const FLEET = `
[[node]]
name = "llama"
kind = "llamacpp"
ttft = "5ms"
models = ["bge-reranker"]

[[node]]
name = "vl"
kind = "vllm"
ttft = "5ms"
models = ["bge-reranker"]
`;

let env: FleetAndGateway;

before(async () => {
  env = await startFleetAndGateway(FLEET, (sim) =>
    [
      '[server]\nlisten = "127.0.0.1:0"',
      '[health]\ninterval = "200ms"\ntimeout = "5s"',
      '[discovery]\ninterval = "300ms"\ntimeout = "5s"',
      ...sim.nodes.map((n) => `[[nodes]]\nname = "${n.name}"\nurl = "${n.url}"\nkind = "${n.kind}"`),
    ].join('\n'),
  );
  await untilListed(env.gw, 2, 'both nodes listed');
});

after(async () => {
  await env?.close();
});

for (const path of ['/reranking', '/v1/reranking']) {
  test(`POST ${path} is routed by model to the llama-server, never to vLLM (which has no such path)`, async () => {
    for (let i = 0; i < 3; i += 1) {
      const answer = await httpJson('POST', `${env.gw.url}${path}`, {
        model: 'bge-reranker',
        query: 'what is a fox',
        documents: ['a fox is an animal', 'tea'],
      });
      assert.equal(answer.status, 200, answer.text);
      assert.equal(answer.headers['x-switchyard-node'], 'llama');
      const body = answer.json<{ results: { index: number; relevance_score: number }[] }>();
      assert.equal(body.results.length, 2);
    }
    const vl = (await env.gw.explain(`model=bge-reranker&endpoint=${path}`)).nodes.find((n) => n.node === 'vl');
    assert.equal(vl?.reason, 'endpoint_unsupported');
    assert.equal(vl?.detail, `its kind (vllm) does not serve POST ${path}`);
  });
}
