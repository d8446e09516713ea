// Issue 24, items 1 and 2 (an `auto` node that is Ollama): the gateway did not read a server's
// version, so a llama-server build older than Anthropic's Messages (b7187) was sent `/v1/messages`
// and only its 404 taught the gateway; and a `kind = "auto"` node that is an Ollama never got
// Ollama's native `/api/*` (only `kind = "ollama"` did). Now the capacity poll reads what a node
// says of itself — llama-server's `build_info`, Ollama's `/api/version` — and for `auto` which
// kind it is: a build known to predate an endpoint is excluded with its reason before any request
// (shown in explain and /admin/hosts), and an auto node found to be Ollama serves `/api/chat` and
// is listed in `/api/tags`.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startFleetAndGateway, type FleetAndGateway } from '#test/fixtures/in-process-fleet.ts';
import { httpJson, simRequests } from '#test/fixtures/http.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { nodeChanges } from '#test/fixtures/gateway-waits.ts';

const FLEET = `
[[node]]
name = "old"
kind = "llamacpp"
version = "b7000-1a2b3c4"
ttft = "5ms"
tokens_per_second = 400
models = ["coder"]

[[node]]
name = "new"
kind = "llamacpp"
ttft = "5ms"
tokens_per_second = 400
models = ["coder"]

[[node]]
name = "olla"
kind = "ollama"
ttft = "5ms"
tokens_per_second = 400
models = ["qwen3:latest"]
`;

let env: FleetAndGateway;
let client: Anthropic;

before(async () => {
  // The Ollama node is configured as `auto`: its answers must tell the gateway what it is.
  env = await startFleetAndGateway(FLEET, (sim) =>
    gatewayToml(
      sim.nodes.map((n) => ({ name: n.name, url: n.url, kind: n.name === 'olla' ? 'auto' : n.kind })),
      '[routing]\npolicy = "round-robin"',
    ),
  );
  await untilEvent(
    async () => {
      const hosts = (await env.gw.hosts()).hosts;
      return (
        hosts.find((h) => h.name === 'old')?.server?.version === 'b7000-1a2b3c4' &&
        hosts.find((h) => h.name === 'olla')?.server?.detected_kind === 'ollama'
      );
    },
    [nodeChanges(env.gw)],
    'the nodes’ versions and the auto node’s kind read',
  );
  client = new Anthropic({ baseURL: env.gw.url, apiKey: 'unused', maxRetries: 0, timeout: 20_000 });
});

after(async () => {
  await env?.close();
});

test('a build that predates /v1/messages is excluded with its reason before it is ever asked', async () => {
  for (let i = 0; i < 4; i += 1) {
    const { data, response } = await client.messages
      .create({ model: 'coder', max_tokens: 4, messages: [{ role: 'user', content: `hi ${i}` }] })
      .withResponse();
    assert.equal(data.type, 'message');
    assert.equal(response.headers.get('x-switchyard-node'), 'new');
  }
  const asked = (await simRequests(env.sim.url('old'))).filter((r) => r.path === '/v1/messages').length;
  assert.equal(asked, 0, 'the old build is never sent /v1/messages');
  const old = (await env.gw.explain('model=coder&endpoint=/v1/messages')).nodes.find((n) => n.node === 'old');
  assert.equal(old?.reason, 'endpoint_unsupported');
  assert.equal(old?.detail, 'its version b7000-1a2b3c4 predates POST /v1/messages (llamacpp serves it from b7187)');
  // Its other endpoints stay: chat is served by every build.
  assert.equal(
    (await env.gw.explain('model=coder&endpoint=/v1/chat/completions')).nodes.find((n) => n.node === 'old')?.verdict,
    'eligible',
  );
  const hosts = (await env.gw.hosts()).hosts;
  const host = hosts.find((h) => h.name === 'old');
  assert.match(String(host?.endpoints?.lacking['/v1/messages']), /predates POST \/v1\/messages/);
  assert.ok(host?.endpoints?.serves.includes('/v1/chat/completions') && !host.endpoints.serves.includes('/v1/messages'));
  assert.deepEqual(hosts.find((h) => h.name === 'new')?.server, {
    version: 'b10587-3f545bec',
    detected_kind: null,
    evidence: null,
  });
});

test('an auto node that answers as Ollama serves Ollama’s native API and is listed in /api/tags', async () => {
  const host = (await env.gw.hosts()).hosts.find((h) => h.name === 'olla');
  assert.equal(host?.server?.version, '0.14.0');
  assert.match(String(host?.server?.evidence), /api\/version/);
  assert.ok(host?.endpoints?.serves.includes('/api/chat'));
  const chat = await httpJson('POST', `${env.gw.url}/api/chat`, {
    model: 'qwen3',
    stream: false,
    messages: [{ role: 'user', content: 'hi' }],
  });
  assert.equal(chat.status, 200, chat.text);
  assert.equal(chat.json<{ done?: boolean }>().done, true);
  assert.equal(chat.headers['x-switchyard-node'], 'olla');
  const tags = await httpJson('GET', `${env.gw.url}/api/tags`);
  assert.deepEqual(
    tags.json<{ models: { name: string }[] }>().models.map((m) => m.name),
    ['qwen3:latest'],
  );
});
