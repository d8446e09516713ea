// Issue 24, item 2: a server older than an endpoint answers it with a route-level 404 (SGLang before
// its Anthropic router: FastAPI's {"detail":"Not Found"}). The gateway passed that 404 to the client
// as the answer, in another dialect, though another node served the request. Now the 404 before any
// byte records the node as lacking the endpoint (shown with what it said, in explain and metrics),
// the request fails over, and the node is not asked again; when no node that serves the model is
// left, the client gets the endpoint's own error shape (Anthropic's here), never the node's body.
// Translation is off here (`[routing] translate = false`): with it on (the default), a Messages
// request for a model whose nodes have all shown they lack /v1/messages — the one that showed it
// too — is served over their Chat Completions instead (issue 40: test/integration/endpoints/0040-02-*).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import { startFleetAndGateway, type FleetAndGateway } from '#test/fixtures/in-process-fleet.ts';
import { simRequests } from '#test/fixtures/http.ts';
import { untilListed } from '#test/fixtures/gateway-waits.ts';

const FLEET = `
[[node]]
name = "old"
kind = "sglang"
ttft = "5ms"
tokens_per_second = 400
models = ["coder"]

[[node]]
name = "llama"
kind = "llamacpp"
ttft = "5ms"
tokens_per_second = 400
models = ["coder"]

[[node]]
name = "legacy"
kind = "sglang"
ttft = "5ms"
tokens_per_second = 400
models = ["legacy-model"]
`;

let env: FleetAndGateway;
let client: Anthropic;

before(async () => {
  env = await startFleetAndGateway(FLEET, (sim) =>
    [
      '[server]\nlisten = "127.0.0.1:0"',
      '[health]\ninterval = "200ms"\ntimeout = "5s"',
      // Listings every 30 s: a new listing would (rightly) try the endpoint again.
      '[discovery]\ninterval = "30s"\ntimeout = "5s"',
      '[routing]\npolicy = "round-robin"\ntokenize_timeout = "10s"\ntranslate = false',
      ...sim.nodes.map((n) => `[[nodes]]\nname = "${n.name}"\nurl = "${n.url}"\nkind = "${n.kind}"`),
    ].join('\n'),
  );
  await untilListed(env.gw, 3, 'every node listed');
  client = new Anthropic({ baseURL: env.gw.url, apiKey: 'unused', maxRetries: 0, timeout: 20_000 });
});

after(async () => {
  await env?.close();
});

const messagesAsked = async (node: string): Promise<number> =>
  (await simRequests(env.sim.url(node))).filter((r) => r.path === '/v1/messages').length;

test('the node that answers a route-level 404 is failed over, remembered as lacking the endpoint, and not asked again', async () => {
  for (let i = 0; i < 6; i += 1) {
    const { data, response } = await client.messages
      .create({ model: 'coder', max_tokens: 4, messages: [{ role: 'user', content: `hi ${i}` }] })
      .withResponse();
    assert.equal(data.type, 'message');
    assert.equal(response.headers.get('x-switchyard-node'), 'llama');
  }
  assert.equal(await messagesAsked('old'), 1, 'asked once, then excluded');
  const explained = await env.gw.explain('model=coder&endpoint=/v1/messages');
  const old = explained.nodes.find((n) => n.node === 'old');
  assert.equal(old?.reason, 'endpoint_unsupported');
  assert.match(String(old?.detail), /route-level 404 \(404 \{"detail":"Not Found"\}\)/);
  const host = (await env.gw.hosts()).hosts.find((h) => h.name === 'old');
  assert.deepEqual(host?.endpoints?.lacking, { '/v1/messages': '404 {"detail":"Not Found"}' });
  assert.ok(host?.endpoints?.serves.includes('/v1/chat/completions') && !host.endpoints.serves.includes('/v1/messages'));
  // Its other endpoints are untouched.
  assert.equal(
    (await env.gw.explain('model=coder&endpoint=/v1/chat/completions')).nodes.find((n) => n.node === 'old')?.verdict,
    'eligible',
  );
  const metrics = await env.gw.metrics();
  assert.match(metrics, /gateway_upstream_attempts_total\{node="old",result="endpoint_missing"\} 1/);
  assert.match(metrics, /gateway_model_filter_exclusions_total\{model="coder",reason="endpoint_unsupported"\} [1-9]/);
});

test('with no node left that serves the endpoint, the client gets Anthropic’s 404, not the node’s FastAPI body', async () => {
  for (const attempt of ['first (the node is asked)', 'second (the node is excluded)']) {
    await assert.rejects(
      client.messages.create({ model: 'legacy-model', max_tokens: 4, messages: [{ role: 'user', content: 'hi' }] }),
      (error: unknown) => {
        assert.ok(error instanceof Anthropic.NotFoundError, `${attempt}: got ${String(error)}`);
        const body = error.error as {
          type?: string;
          error?: { type?: string; message?: string; code?: string };
          detail?: unknown;
        };
        assert.equal(body.type, 'error', attempt);
        assert.equal(body.error?.type, 'not_found_error', attempt);
        assert.equal(body.error?.code, 'endpoint_unsupported', attempt);
        assert.match(String(body.error?.message), /no node serving model 'legacy-model' serves POST \/v1\/messages/);
        assert.equal(body.detail, undefined, 'never the node’s own body');
        return true;
      },
    );
  }
  assert.equal(await messagesAsked('legacy'), 1);
});
