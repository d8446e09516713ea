// Issue 24, item 3: Claude Code and the other coding agents speak Anthropic's Messages API, which
// llama-server, vLLM and Ollama serve natively — but the gateway routed only the OpenAI paths, so
// `POST /v1/messages` got the gateway's OpenAI-shaped 404. The official, unchanged
// `@anthropic-ai/sdk` client now goes through it: `messages.create`, `messages.stream` and
// `messages.countTokens` are routed by model to a node that serves the model and the endpoint, the
// key is taken from `x-api-key` (what the SDK sends), a prompt too long for every node is refused
// by the gateway's own guard in Anthropic's error shape, a node whose kind lacks the endpoint is
// excluded with its reason, and the requests are counted by endpoint.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import { startFleetAndGateway, type FleetAndGateway } from '#test/fixtures/in-process-fleet.ts';
import { simRequests } from '#test/fixtures/http.ts';
import { untilListed } from '#test/fixtures/gateway-waits.ts';

const FLEET = `
[[node]]
name = "llama"
kind = "llamacpp"
ttft = "5ms"
tokens_per_second = 400
[[node.model]]
id = "coder"
context = 2048

[[node]]
name = "vllm"
kind = "vllm"
ttft = "5ms"
tokens_per_second = 400
[[node.model]]
id = "coder"
context = 2048

[[node]]
name = "plain"
kind = "vllm"
ttft = "5ms"
tokens_per_second = 400
[[node.model]]
id = "coder"
context = 2048
`;

const KEY = 'sk-claude-test';
let env: FleetAndGateway;
let client: Anthropic;

before(async () => {
  env = await startFleetAndGateway(FLEET, (sim) =>
    [
      '[server]',
      'listen = "127.0.0.1:0"',
      `api_keys = ["${KEY}"]`,
      '[health]',
      'interval = "200ms"',
      'timeout = "5s"',
      '[discovery]',
      'interval = "300ms"',
      'timeout = "5s"',
      '[routing]',
      'tokenize_timeout = "10s"',
      `[[nodes]]\nname = "llama"\nurl = "${sim.url('llama')}"\nkind = "llamacpp"`,
      `[[nodes]]\nname = "vllm"\nurl = "${sim.url('vllm')}"\nkind = "vllm"`,
      // A plain OpenAI-compatible server: the kind serves only the OpenAI routes.
      `[[nodes]]\nname = "plain"\nurl = "${sim.url('plain')}"\nkind = "openai"`,
    ].join('\n'),
  );
  await untilListed(env.gw, 3, 'every node listed');
  client = new Anthropic({ baseURL: env.gw.url, apiKey: KEY, maxRetries: 0, timeout: 20_000 });
});

after(async () => {
  await env?.close();
});

test('messages.create is answered by a node that serves the model and the endpoint', async () => {
  const { data, response } = await client.messages
    .create({ model: 'coder', max_tokens: 8, system: 'be brief', messages: [{ role: 'user', content: 'hello there' }] })
    .withResponse();
  assert.equal(data.type, 'message');
  assert.equal(data.role, 'assistant');
  assert.equal(data.content[0]?.type, 'text');
  assert.ok(data.usage.input_tokens > 0 && data.usage.output_tokens > 0);
  assert.ok(['llama', 'vllm'].includes(String(response.headers.get('x-switchyard-node'))), 'never the plain OpenAI node');
});

test('messages.stream delivers the events in order and a final message', async () => {
  const stream = client.messages.stream({
    model: 'coder',
    max_tokens: 6,
    messages: [{ role: 'user', content: 'count to three' }],
  });
  const types: string[] = [];
  stream.on('streamEvent', (event) => types.push(event.type));
  const final = await stream.finalMessage();
  assert.equal(final.type, 'message');
  assert.ok(final.usage.output_tokens > 0);
  assert.equal(types[0], 'message_start');
  assert.equal(types[1], 'content_block_start');
  assert.deepEqual(types.slice(-3), ['content_block_stop', 'message_delta', 'message_stop']);
  assert.ok(types.slice(2, -3).every((t) => t === 'content_block_delta') && types.length > 5);
});

test('messages.countTokens counts on a node that serves count_tokens', async () => {
  const counted = await client.messages.countTokens({
    model: 'coder',
    messages: [{ role: 'user', content: 'one two three four' }],
  });
  assert.ok(counted.input_tokens > 4, `counted ${counted.input_tokens}`);
});

test('a prompt too long for every node is refused by the gateway guard in Anthropic’s error shape', async () => {
  const long = 'word '.repeat(6000);
  await assert.rejects(
    client.messages.create({ model: 'coder', max_tokens: 8, messages: [{ role: 'user', content: long }] }),
    (error: unknown) => {
      assert.ok(error instanceof Anthropic.BadRequestError, `got ${String(error)}`);
      const body = error.error as { type?: string; error?: { type?: string; message?: string; code?: string } };
      assert.equal(body.type, 'error');
      assert.equal(body.error?.type, 'invalid_request_error');
      assert.equal(body.error?.code, 'context_length_exceeded');
      assert.match(String(body.error?.message), /maximum context length is 2048 tokens/);
      return true;
    },
  );
});

test('an unknown model, or no key, is answered in Anthropic’s error shape with its status', async () => {
  await assert.rejects(
    client.messages.create({ model: 'nope', max_tokens: 4, messages: [{ role: 'user', content: 'hi' }] }),
    (error: unknown) => {
      assert.ok(error instanceof Anthropic.NotFoundError, `got ${String(error)}`);
      assert.equal((error.error as { error?: { type?: string } }).error?.type, 'not_found_error');
      return true;
    },
  );
  const anonymous = new Anthropic({ baseURL: env.gw.url, apiKey: 'wrong', maxRetries: 0 });
  await assert.rejects(
    anonymous.messages.countTokens({ model: 'coder', messages: [{ role: 'user', content: 'hi' }] }),
    (error: unknown) => {
      assert.ok(error instanceof Anthropic.AuthenticationError, `got ${String(error)}`);
      assert.equal((error.error as { error?: { type?: string } }).error?.type, 'authentication_error');
      return true;
    },
  );
});

test('a node’s own error, passed on, is worded in Anthropic’s shape with its status and message', async () => {
  const res = await fetch(`${env.gw.url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': KEY },
    body: JSON.stringify({ model: 'coder', max_tokens: 4 }),
  });
  assert.equal(res.status, 400);
  const body = (await res.json()) as { type?: string; error?: { type?: string; message?: string } };
  assert.equal(body.type, 'error');
  assert.equal(typeof body.error?.type, 'string');
  assert.match(String(body.error?.message), /messages/);
});

test('the node whose kind lacks the endpoint is excluded with endpoint_unsupported, and never asked', async () => {
  const explained = await env.gw.explain('model=coder&endpoint=/v1/messages');
  const plain = explained.nodes.find((n) => n.node === 'plain');
  assert.equal(plain?.verdict, 'excluded');
  assert.equal(plain?.reason, 'endpoint_unsupported');
  assert.match(String(plain?.detail), /its kind \(openai\) does not serve POST \/v1\/messages/);
  // The OpenAI routes still reach it.
  const chat = await env.gw.explain('model=coder&endpoint=/v1/chat/completions');
  assert.equal(chat.nodes.find((n) => n.node === 'plain')?.verdict, 'eligible');
  const asked = await simRequests(env.sim.url('plain'));
  assert.deepEqual(
    asked.filter((r) => r.path.startsWith('/v1/messages')),
    [],
  );
});

test('the Messages requests are counted by endpoint', async () => {
  const metrics = await env.gw.metrics();
  const count = (endpoint: string, status: string): number =>
    Number(
      new RegExp(
        `gateway_endpoint_requests_total\\{endpoint="${endpoint.replace(/\//g, '\\/')}",status="${status}"\\} (\\d+)`,
      ).exec(metrics)?.[1] ?? 0,
    );
  assert.ok(
    count('/v1/messages', '200') >= 2,
    metrics
      .split('\n')
      .filter((l) => l.includes('endpoint_requests'))
      .join('\n'),
  );
  assert.ok(count('/v1/messages/count_tokens', '200') >= 1);
  assert.ok(count('/v1/messages', '400') >= 1);
});
