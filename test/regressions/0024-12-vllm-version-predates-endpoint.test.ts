// Issue 24, item 1 (vLLM): a vLLM node's `GET /version` was read and shown but never judged — no
// first release was recorded for any of vLLM's routes — so a vLLM older than `vllm serve`'s
// Anthropic Messages (first in v0.11.1, vllm-project/vllm #27882) was sent `/v1/messages` and only
// its 404 taught the gateway. Now such a node is excluded with its version named before it is ever
// asked, while a current vLLM is routed; the old node's other endpoints stay.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startFleetAndGateway, type FleetAndGateway } from '#test/fixtures/in-process-fleet.ts';
import { simRequests } from '#test/fixtures/http.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { nodeChanges } from '#test/fixtures/gateway-waits.ts';

const FLEET = `
[[node]]
name = "old"
kind = "vllm"
version = "0.10.2"
ttft = "5ms"
tokens_per_second = 400
models = ["coder"]

[[node]]
name = "current"
kind = "vllm"
version = "0.11.1"
ttft = "5ms"
tokens_per_second = 400
models = ["coder"]
`;

let env: FleetAndGateway;
let client: Anthropic;

before(async () => {
  env = await startFleetAndGateway(FLEET, (sim) =>
    gatewayToml(
      sim.nodes.map((n) => ({ name: n.name, url: n.url, kind: n.kind })),
      '[routing]\npolicy = "round-robin"',
    ),
  );
  await untilEvent(
    async () => {
      const hosts = (await env.gw.hosts()).hosts;
      return (
        hosts.find((h) => h.name === 'old')?.server?.version === '0.10.2' &&
        hosts.find((h) => h.name === 'current')?.server?.version === '0.11.1'
      );
    },
    [nodeChanges(env.gw)],
    'both vLLM nodes’ versions read from GET /version',
  );
  client = new Anthropic({ baseURL: env.gw.url, apiKey: 'unused', maxRetries: 0, timeout: 20_000 });
});

after(async () => {
  await env?.close();
});

test('a vLLM older than vllm serve’s Anthropic Messages is excluded with its version named; a current one is routed', async () => {
  for (let i = 0; i < 4; i += 1) {
    const { data, response } = await client.messages
      .create({ model: 'coder', max_tokens: 4, messages: [{ role: 'user', content: `hi ${i}` }] })
      .withResponse();
    assert.equal(data.type, 'message');
    assert.equal(response.headers.get('x-switchyard-node'), 'current');
  }
  assert.equal(
    (await simRequests(env.sim.url('old'))).filter((r) => r.path === '/v1/messages').length,
    0,
    'the old vLLM is never sent /v1/messages',
  );
  const nodes = (await env.gw.explain('model=coder&endpoint=/v1/messages')).nodes;
  const old = nodes.find((n) => n.node === 'old');
  assert.equal(old?.reason, 'endpoint_unsupported');
  assert.equal(old?.detail, 'its version 0.10.2 predates POST /v1/messages (vllm serves it from 0.11.1)');
  assert.equal(nodes.find((n) => n.node === 'current')?.verdict, 'eligible');
  // Its other endpoints stay: chat is served by every release.
  assert.equal(
    (await env.gw.explain('model=coder&endpoint=/v1/chat/completions')).nodes.find((n) => n.node === 'old')?.verdict,
    'eligible',
  );
  const host = (await env.gw.hosts()).hosts.find((h) => h.name === 'old');
  assert.match(String(host?.endpoints?.lacking['/v1/messages']), /its version 0\.10\.2 predates POST \/v1\/messages/);
});
