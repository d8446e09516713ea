// Issue 38 item 3 (and item 1's rule carried to every depth): a budget dodged through case-variant
// keys. Where a node's decoder matches keys case-insensitively — Ollama's Go encoding/json, for every
// struct field at every depth; the `openai` and `auto` kinds are taken to do the same — the gateway
// read one member and the node another: `{"MAX_TOKENS":100000}` was reserved as
// routing.completion_reserve and generated as 100000; a message's `"CONTENT"` was sized as an empty
// message and read by the node as its whole text; `options` with `"Num_Predict"` beside
// `"num_predict"`, `stream_options` with `"Include_Usage"`. Only two top-level keys folding onto one
// were refused. What must hold: a key the gateway reads (to route, size or reserve), at any depth,
// is read once the way the node's decoder reads it — a case variant of it, alone or beside it, is
// refused 400 naming the key's path (param = the path the gateway reads), and never reaches the
// node; keys the gateway does not read (a tool's JSON schema, a message's extras) pass. The node
// here is the Ollama sim behind a Go-style decoder (test/fixtures/go-decoder.ts) that sends the sim
// what Go would read.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { startGateway, startSimFleet, type GatewayUnderTest, type SimFleet } from '#test/fixtures/in-process-fleet.ts';
import { startGoDecoder, type GoDecoderNode } from '#test/fixtures/go-decoder.ts';
import { untilListed } from '#test/fixtures/gateway-waits.ts';

const KEY = 'sk-budgeted';
const FLEET = `[[node]]\nname = "olla"\nkind = "ollama"\nttft = "1ms"\ntokens_per_second = 1000\nmodels = ["llama3.2:latest"]\n`;

let sim: SimFleet | undefined;
let go: GoDecoderNode | undefined;
let gw: GatewayUnderTest | undefined;

before(async () => {
  sim = await startSimFleet(FLEET);
  go = await startGoDecoder(sim.url('olla'));
  gw = await startGateway(
    [
      '[server]\nlisten = "127.0.0.1:0"\ndrain_timeout = "0s"',
      '[health]\ninterval = "200ms"\ntimeout = "5s"',
      '[discovery]\ninterval = "300ms"\ntimeout = "5s"',
      `[[tenants]]\nname = "budgeted"\nkeys = ["${KEY}"]\ntokens_per_day = 1000000`,
      `[[nodes]]\nname = "olla"\nurl = "${go.url}"\nkind = "ollama"`,
    ].join('\n'),
  );
  await untilListed(gw!, 1, 'the node listed');
});

after(async () => {
  await gw?.close();
  await go?.close();
  await sim?.close();
});

const post = async (path: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> => {
  const res = await request(`${gw!.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
  return { status: res.statusCode, json: (await res.body.json()) as Record<string, unknown> };
};

/** The refusal's words: OpenAI's error object, or Ollama's `{"error": "…"}` on its native routes. */
const refusal = (json: Record<string, unknown>): { message: string; param: unknown } =>
  typeof json.error === 'string'
    ? { message: json.error, param: undefined }
    : (json.error as { message: string; param: unknown });

const LONG = 'lorem ipsum '.repeat(400);
const hi = [{ role: 'user', content: 'hi' }];

test('a plain body is read alike by the gateway and the Go-style decoder, and served', async () => {
  const before_ = go!.read.length;
  const chat = await post('/v1/chat/completions', { model: 'llama3.2', max_tokens: 3, messages: hi });
  assert.equal(chat.status, 200, JSON.stringify(chat.json));
  const native = await post('/api/chat', { model: 'llama3.2', stream: false, options: { num_predict: 3 }, messages: hi });
  assert.equal(native.status, 200, JSON.stringify(native.json));
  assert.deepEqual(
    go!.read.slice(before_).map((r) => ({
      max_tokens: (r as { max_tokens?: number }).max_tokens,
      num_predict: (r as { options?: { num_predict?: number } }).options?.num_predict,
    })),
    [
      { max_tokens: 3, num_predict: undefined },
      { max_tokens: undefined, num_predict: 3 },
    ],
  );
  // Keys the gateway does not read are not judged: a tool's schema with both cases of a property.
  const tools = [
    {
      type: 'function',
      function: { name: 'f', parameters: { type: 'object', properties: { Name: { type: 'string' }, name: { type: 'string' } } } },
    },
  ];
  const withTools = await post('/v1/chat/completions', { model: 'llama3.2', max_tokens: 3, messages: hi, tools });
  assert.equal(withTools.status, 200, JSON.stringify(withTools.json));
});

const ATTACKS: { name: string; path: string; body: unknown; param: string; says: RegExp }[] = [
  {
    name: 'a lone upper-case max_tokens (reserved as the default, generated as asked)',
    path: '/v1/chat/completions',
    body: { model: 'llama3.2', MAX_TOKENS: 300, messages: hi },
    param: 'max_tokens',
    says: /^body has "MAX_TOKENS": a node whose JSON keys match case-insensitively reads it as "max_tokens"/,
  },
  {
    name: 'a message whose content is keyed "CONTENT" (sized empty, read whole)',
    path: '/v1/chat/completions',
    body: {
      model: 'llama3.2',
      max_tokens: 3,
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'user', CONTENT: LONG },
      ],
    },
    param: 'messages[1].content',
    says: /^body has "messages\[1\]\.CONTENT": .* reads it as "messages\[1\]\.content"/,
  },
  {
    name: 'a message with "Content" beside "content"',
    path: '/api/chat',
    body: {
      model: 'llama3.2',
      stream: false,
      options: { num_predict: 3 },
      messages: [{ role: 'user', content: 'hi', Content: LONG }],
    },
    param: 'messages[0].content',
    says: /^body has "messages\[0\]\.Content" beside "messages\[0\]\.content"/,
  },
  {
    name: 'options.Num_Predict beside options.num_predict',
    path: '/api/chat',
    body: { model: 'llama3.2', stream: false, options: { num_predict: 5, Num_Predict: 300 }, messages: hi },
    param: 'options.num_predict',
    says: /^body has "options\.Num_Predict" beside "options\.num_predict"/,
  },
  {
    name: 'options.NUM_PREDICT alone',
    path: '/api/chat',
    body: { model: 'llama3.2', stream: false, options: { NUM_PREDICT: 300 }, messages: hi },
    param: 'options.num_predict',
    says: /^body has "options\.NUM_PREDICT": .* reads it as "options\.num_predict"/,
  },
  {
    name: 'stream_options.Include_Usage (the usage the gateway asks for, turned off again)',
    path: '/v1/chat/completions',
    body: { model: 'llama3.2', max_tokens: 3, stream: true, stream_options: { Include_Usage: false }, messages: hi },
    param: 'stream_options.include_usage',
    says: /"stream_options\.Include_Usage"/,
  },
  {
    name: 'an escaped upper-case key (\\u004dAX_TOKENS) is the same key',
    path: '/v1/chat/completions',
    body: '{"model":"llama3.2","\\u004dAX_TOKENS":300,"messages":[{"role":"user","content":"hi"}]}',
    param: 'max_tokens',
    says: /^body has "MAX_TOKENS"/,
  },
];

test('a case variant of a key the gateway reads, at any depth, is refused 400 naming its path, and never reaches the node', async () => {
  const before_ = go!.read.length;
  for (const attack of ATTACKS) {
    const answer = await post(attack.path, attack.body);
    assert.equal(
      answer.status,
      400,
      `${attack.name}: ${JSON.stringify(answer.json).slice(0, 300)} (the node read ${JSON.stringify(go!.read.at(-1)).slice(0, 200)})`,
    );
    const error = refusal(answer.json);
    assert.match(error.message, attack.says, attack.name);
    if (error.param !== undefined) assert.equal(error.param, attack.param, attack.name);
  }
  assert.deepEqual(go!.read.slice(before_), [], 'no such body reached the node');
});
