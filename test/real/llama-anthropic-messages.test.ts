// Issue 24 against a real llama-server router (runs only when LLAMA_SERVER_BIN and LLAMA_MODELS_DIR
// are set; CI has neither): the official `@anthropic-ai/sdk`, unchanged, through an in-process
// gateway — `messages.create`, `messages.stream`, `messages.countTokens` — and `/v1/rerank` passed
// through as the router answers it. A router LOADS a model to count its tokens (PROTOCOLS.md §7.z),
// so the gateway sends count_tokens only for a model the router has loaded, never on its own: the
// model nobody asked for stays unloaded across many polls, counting the loaded model loads nothing
// else, and a count for the unloaded one is the gateway's. Models: `LLAMACPP_SRC=<checkout> ../shared/tools/make-tiny-gguf.py DIR`.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startGateway, type GatewayUnderTest } from '#test/fixtures/in-process-fleet.ts';
import { waitForHost } from '#test/fixtures/admin-readers.ts';
import { eventually, httpJson } from '#test/fixtures/http.ts';
import { realRouterSkip, startRealRouter, type ListedModel, type RealRouter } from '#test/fixtures/real-llama-router.ts';

const skip = realRouterSkip;

let router: RealRouter | undefined;
let routerUrl = '';
let gw: GatewayUnderTest | undefined;
let client: Anthropic;
let ids: string[] = [];

async function statuses(): Promise<Record<string, string | undefined>> {
  const data = (await httpJson('GET', `${routerUrl}/v1/models`)).json<{ data: ListedModel[] }>().data;
  return Object.fromEntries(data.map((m) => [m.id, m.status?.value]));
}

before(async () => {
  if (skip !== false) return;
  router = await startRealRouter(2);
  routerUrl = router.url;
  try {
    ids = Object.keys(await statuses()).sort();
    gw = await startGateway(
      gatewayToml([{ name: 'router', url: routerUrl, kind: 'llamacpp' }], '[routing]\nqueue_timeout = "60s"'),
    );
    await waitForHost(
      gw,
      'router',
      (h) => h.router?.max_instances === 2 && h.server?.version !== undefined && h.server?.version !== null,
      'limits and build read',
      30_000,
    );
    client = new Anthropic({ baseURL: gw.url, apiKey: 'unused', maxRetries: 0, timeout: 120_000 });
  } catch (error) {
    router.stop();
    throw error;
  }
});

after(async () => {
  await gw?.close();
  router?.stop();
});

test('messages.create and messages.stream through the gateway on a real router', { skip }, async () => {
  const [first] = ids as [string];
  const made = await client.messages.create({ model: first, max_tokens: 2, messages: [{ role: 'user', content: 'hi' }] });
  assert.equal(made.type, 'message');
  assert.equal(made.role, 'assistant');
  assert.ok(made.usage.input_tokens > 0);
  const events: string[] = [];
  const stream = client.messages.stream({
    model: first,
    max_tokens: 2,
    temperature: 0,
    messages: [{ role: 'user', content: 'hello' }],
  });
  for await (const event of stream) events.push(event.type);
  const final = await stream.finalMessage();
  process.stderr.write(`real router stream events: ${events.join(',')}; stop ${final.stop_reason}\n`);
  assert.equal(events[0], 'message_start');
  assert.equal(events.at(-1), 'message_stop');
  assert.ok(events.includes('message_delta'));
  assert.equal(final.type, 'message');
});

test('count_tokens is sent only for the model asked: the other stays unloaded across many polls', { skip }, async () => {
  const [first, second] = ids as [string, string];
  const before = await statuses();
  assert.equal(before[first], 'loaded', 'the first model was loaded by the messages test');
  assert.notEqual(before[second], 'loaded');
  const counted = await client.messages.countTokens({
    model: first,
    messages: [{ role: 'user', content: 'count these few words please' }],
  });
  assert.ok(counted.input_tokens > 0, `input_tokens ${counted.input_tokens}`);
  // Many discovery and capacity rounds (every 300 ms, the version read every 20th): none counts or loads.
  const host = await waitForHost(gw!.url, 'router', () => true, 'a host view');
  const polledFrom = Date.now();
  await eventually(() => Date.now() - polledFrom > 8_000, 20_000, 'eight seconds of polls');
  const after8s = await statuses();
  process.stderr.write(`real router statuses after polls: ${JSON.stringify(after8s)}; build ${host.server?.version}\n`);
  assert.notEqual(after8s[second], 'loaded', 'no poll loaded the model nobody asked for');
  assert.notEqual(after8s[second], 'loading');
  // Asked for the second model's count, the gateway counts it (its bound, never below the true
  // count): a count never loads a model the router has not loaded (issue 41).
  const { data: second_, response } = await client.messages
    .countTokens({ model: second, messages: [{ role: 'user', content: 'count these few words please' }] })
    .withResponse();
  assert.equal(response.headers.get('x-switchyard-count'), 'bound');
  assert.ok(second_.input_tokens >= counted.input_tokens, `bound ${second_.input_tokens} ≥ ${counted.input_tokens}`);
  assert.notEqual((await statuses())[second], 'loaded');
  assert.notEqual((await statuses())[second], 'loading');
});

test('/v1/rerank is passed through as the router answers it', { skip }, async () => {
  const [first] = ids as [string];
  const body = { model: first, query: 'a fox', documents: ['a fox is an animal', 'tea'] };
  const direct = await httpJson('POST', `${routerUrl}/v1/rerank`, body);
  const through = await httpJson('POST', `${gw!.url}/v1/rerank`, body);
  process.stderr.write(
    `real router rerank: direct ${direct.status} ${direct.text.slice(0, 200)}; through ${through.status} ${through.text.slice(0, 200)}\n`,
  );
  assert.equal(through.status, direct.status);
  assert.equal(through.headers['x-switchyard-node'], 'router');
});
