// Issue 40 item 4: a stream that never starts held the client for 300 s (headers_timeout or
// body_idle_timeout, whichever applied), and a stream that broke after its first bytes simply
// stopped, so a client could not tell a cut answer from a whole one. What must hold:
// - a node that accepts a streamed request and sends no first token within
//   `upstream.first_token_timeout` (no head at all, or a head, a role delta and a keep-alive) is
//   abandoned and the request is served by another node, nothing of the silent node's answer
//   reaching the client (no byte lost or doubled), the abandoned attempt reported like any
//   failure (`proxy:attempt` result `timeout`, naming the deadline; counted in the metrics);
// - after the first bytes, a broken stream ends with a terminal error event in the client's
//   dialect, which each official client raises: OpenAI chat (`data: {"error":…}`), the Responses
//   API (`response.failed` and `error`), Anthropic Messages (`event: error`), Ollama (`{"error":…}`).
// The gateway runs on a manual clock: the deadline passes when the test moves it, never by the
// machine's speed. Scripted nodes (kind openai, the native routes declared) answer as the test says.
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { Ollama } from 'ollama';
import { request } from 'undici';
import { ManualClock } from '#src/core/clock.ts';
import type { ProxyEvents } from '#src/proxy/index.ts';
import { startScriptedNode, writeInTurn, type ScriptedNode } from '#test/fixtures/scripted-node.ts';
import { startInProcessGateway, type InProcessGateway } from '#test/fixtures/in-process.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { on, untilEvent, type Trigger } from '#test/fixtures/events.ts';
import { advanceUntil } from '#test/fixtures/test-clocks.ts';

const DEADLINE_MS = 30_000;

/** What the next request to reach either node meets; the requests after it are answered. */
type Behaviour = 'silent' | 'head_then_silent' | 'answer' | 'cut' | 'stall';
const plan: Behaviour[] = [];
/** Which node met each request, in order, and how. */
const met: { node: string; behaviour: Behaviour }[] = [];

const chunk = (delta: Record<string, unknown>, finish: string | null = null): string =>
  `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const CHAT_ROLE = chunk({ role: 'assistant', content: '' });
const CHAT_STREAM = [CHAT_ROLE, chunk({ content: 'Hello' }), chunk({ content: ' world' }), chunk({}, 'stop'), 'data: [DONE]\n\n'];

const sse = (event: string, data: Record<string, unknown>): string => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
const RESPONSES_STREAM = [
  sse('response.created', {
    type: 'response.created',
    sequence_number: 0,
    response: { id: 'resp_1', object: 'response', status: 'in_progress', output: [] },
  }),
  sse('response.output_text.delta', {
    type: 'response.output_text.delta',
    sequence_number: 1,
    item_id: 'msg_1',
    output_index: 0,
    content_index: 0,
    delta: 'Hel',
  }),
  sse('response.output_text.delta', {
    type: 'response.output_text.delta',
    sequence_number: 2,
    item_id: 'msg_1',
    output_index: 0,
    content_index: 0,
    delta: 'lo',
  }),
];
const MESSAGES_STREAM = [
  sse('message_start', {
    type: 'message_start',
    message: {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'm',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 3, output_tokens: 0 },
    },
  }),
  sse('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
  sse('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hel' } }),
];
const OLLAMA_STREAM = [
  '{"model":"m","created_at":"2026-12-07T19:00:00Z","message":{"role":"assistant","content":"Hel"},"done":false}\n',
  '{"model":"m","created_at":"2026-12-07T19:00:01Z","message":{"role":"assistant","content":"lo"},"done":false}\n',
];

function answer(url: string, res: ServerResponse, behaviour: Behaviour): void {
  if (behaviour === 'silent') return;
  const ndjson = url === '/api/chat';
  res.writeHead(200, { 'content-type': ndjson ? 'application/x-ndjson' : 'text/event-stream' });
  if (behaviour === 'head_then_silent') {
    // What a node sends on accepting: its head, a role delta, a keep-alive comment; then no token.
    res.write(CHAT_ROLE);
    res.write(':\n\n');
    return;
  }
  if (behaviour === 'answer') {
    writeInTurn(res, CHAT_STREAM);
    return;
  }
  if (behaviour === 'stall') {
    // Its first token, then silence until the gateway gives up on the exchange.
    res.write(CHAT_STREAM.slice(0, 2).join(''));
    return;
  }
  // `cut`: the first events (a token among them), then the connection dropped mid-answer.
  const first =
    url === '/v1/responses'
      ? RESPONSES_STREAM
      : url === '/v1/messages'
        ? MESSAGES_STREAM
        : ndjson
          ? OLLAMA_STREAM
          : CHAT_STREAM.slice(0, 2);
  res.write(first.join(''), () => setImmediate(() => res.destroy()));
}

const clock = new ManualClock();
let nodes: ScriptedNode[];
let gw: InProcessGateway;
const attempts: ProxyEvents['proxy:attempt'][] = [];

before(async () => {
  nodes = await Promise.all(
    ['a', 'b'].map((name) =>
      startScriptedNode((req, res) => {
        const behaviour = plan.shift() ?? 'answer';
        met.push({ node: name, behaviour });
        answer(req.url ?? '', res, behaviour);
      }),
    ),
  );
  const endpoints = '["/v1/chat/completions", "/v1/responses", "/v1/messages", "/api/chat"]';
  const toml = [
    '[server]\nlisten = "127.0.0.1:0"\ndrain_timeout = "0s"',
    // The test moves the clock in large steps: a probe or a listing read still on its way must not
    // time out on it (on a busy machine one would, and the nodes would turn dead or unlisted).
    '[health]\ninterval = "1s"\ntimeout = "1h"',
    '[discovery]\ntimeout = "1h"',
    `[upstream]\nfirst_token_timeout = "${DEADLINE_MS / 1000}s"`,
    ...nodes.map((n, i) => `[[nodes]]\nname = "${['a', 'b'][i]}"\nurl = "${n.url}"\nkind = "openai"\nendpoints = ${endpoints}`),
  ].join('\n');
  gw = await startInProcessGateway(toml, { clock, logLevel: 'info' });
  await advanceUntil(clock, () => gw.gateway.firstRoundDone(0), 'both nodes probed and listed', { stepMs: 1_000 });
  gw.gateway.requestEvents.on('proxy:attempt', (event) => attempts.push(event));
});

after(async () => {
  await gw?.close();
  await Promise.all((nodes ?? []).map((n) => n.close()));
});

beforeEach(() => {
  plan.length = 0;
  met.length = 0;
  attempts.length = 0;
});

/** The nodes' inference requests so far, and how many the gateway cut. */
const received = (): number => nodes.reduce((sum, n) => sum + n.seen.requests, 0);
/** Either node's requests arriving or closing. */
const nodeActivity = (): Trigger[] => nodes.map((n) => n.activity);
const cutByGateway = (): number => nodes.reduce((sum, n) => sum + n.seen.abortedByGateway, 0);

async function silentNodeIsFailedOver(behaviour: 'silent' | 'head_then_silent'): Promise<void> {
  plan.push(behaviour);
  const before = received();
  const cutBefore = cutByGateway();
  const startedAt = clock.monotonicMs();
  const answered = request(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true }),
    signal: AbortSignal.timeout(60_000),
  }).then(async (res) => ({ res, text: await res.body.text() }));
  let done = false;
  void answered.then(
    () => (done = true),
    () => (done = true),
  );
  await untilEvent(() => received() === before + 1, nodeActivity(), 'the first node has the request');
  // Just short of the deadline: still waiting on the silent node, nothing sent to the client or the other node.
  clock.advance(DEADLINE_MS - 1_000);
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(done, false, 'the client is still waiting before the deadline');
  assert.equal(received(), before + 1, 'no second attempt before the deadline');
  // The deadline passes: the silent node is abandoned, the other serves the request.
  await advanceUntil(clock, () => done, 'the request answered after the deadline', { stepMs: 250 });
  const waited = clock.monotonicMs() - startedAt;
  const { res, text } = await answered;
  assert.equal(res.statusCode, 200);
  assert.equal(met.length, 2, JSON.stringify(met));
  const [silent, served] = met;
  assert.equal(silent?.behaviour, behaviour);
  assert.equal(served?.behaviour, 'answer');
  assert.notEqual(served?.node, silent?.node, 'served by the other node');
  assert.equal(res.headers['x-switchyard-node'], served?.node);
  assert.match(String(res.headers['x-switchyard-route']), /./, 'the route says how the serving node was chosen');
  assert.equal(text, CHAT_STREAM.join(''), 'the serving node’s bytes, each once: none of the silent node’s');
  assert.equal(cutByGateway(), cutBefore + 1, 'the silent node’s request was cut');
  // Within the deadline and one attempt (the answering node answers at once: a few clock steps).
  assert.ok(
    waited >= DEADLINE_MS && waited <= DEADLINE_MS + 2_000,
    `answered ${waited}ms after the request (deadline ${DEADLINE_MS}ms)`,
  );
  // Reported like any failed attempt: the silent node's `timeout`, naming the deadline, then the answer.
  await untilEvent(() => attempts.length === 2, [on(gw.gateway.requestEvents, 'proxy:attempt')], 'both attempts reported');
  assert.equal(attempts[0]?.node, silent?.node);
  assert.equal(attempts[0]?.result, 'timeout');
  assert.match(String(attempts[0]?.error), /no first token within 30000ms .*\(upstream\.first_token_timeout\)/);
  assert.equal(attempts[1]?.result, 'success');
  const metrics = (await httpJson('GET', `${gw.url}/metrics`)).text;
  assert.match(metrics, new RegExp(`gateway_upstream_attempts_total\\{node="${silent?.node}",result="timeout"\\} [1-9]`));
}

test('a node that accepts a stream and sends nothing is abandoned at the first-token deadline; another serves it', async () => {
  await silentNodeIsFailedOver('silent');
});

test('a node that sends its head, a role delta and a keep-alive but no token is abandoned too, none of its bytes reaching the client', async () => {
  await silentNodeIsFailedOver('head_then_silent');
});

/** Sends with one node cutting its stream after its first token; `read` reads the answer with the official client. */
async function cutStream(read: () => Promise<unknown>): Promise<unknown> {
  plan.push('cut');
  try {
    await read();
  } catch (error) {
    return error;
  }
  return assert.fail('the client raised no error on a broken stream');
}

test('a chat stream broken after its first bytes ends with an OpenAI error chunk: the openai client raises APIError', async () => {
  const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'x', maxRetries: 0 });
  const seen: string[] = [];
  const error = await cutStream(async () => {
    const stream = await client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
    });
    for await (const part of stream) seen.push(part.choices[0]?.delta.content ?? '');
  });
  assert.ok(error instanceof OpenAI.APIError, String(error));
  assert.match(error.message, /broke off/);
  assert.equal((error.error as { code?: string } | undefined)?.code, 'upstream_stream_broken');
  assert.deepEqual(seen, ['', 'Hello'], 'what the node sent came first, each once');
});

test('a Responses stream broken after its first bytes ends with response.failed and error: the openai client raises APIError', async () => {
  const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'x', maxRetries: 0 });
  const types: string[] = [];
  const error = await cutStream(async () => {
    const stream = await client.responses.create({ model: 'm', input: 'hi', stream: true });
    for await (const event of stream) types.push(event.type);
  });
  assert.ok(error instanceof OpenAI.APIError, String(error));
  assert.match(error.message, /broke off/);
  assert.deepEqual(types, ['response.created', 'response.output_text.delta', 'response.output_text.delta', 'response.failed']);
});

test('an Anthropic Messages stream broken after its first bytes ends with event: error: the Anthropic client raises', async () => {
  const client = new Anthropic({ baseURL: gw.url, apiKey: 'x', maxRetries: 0 });
  const types: string[] = [];
  const error = await cutStream(async () => {
    const stream = client.messages.stream({ model: 'm', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] });
    for await (const event of stream) types.push(event.type);
  });
  assert.ok(error instanceof Anthropic.APIError, String(error));
  assert.match(error.message, /api_error.*broke off/s);
  assert.deepEqual(types, ['message_start', 'content_block_start', 'content_block_delta']);
});

test('an Ollama NDJSON stream broken after its first bytes ends with an {"error"} line: the ollama client throws it', async () => {
  const client = new Ollama({ host: gw.url });
  const parts: string[] = [];
  const error = await cutStream(async () => {
    const stream = await client.chat({ model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true });
    for await (const part of stream) parts.push(part.message.content);
  });
  assert.ok(error instanceof Error);
  assert.match(error.message, /broke off/);
  assert.deepEqual(parts, ['Hel', 'lo']);
});

test('a stream that stalls after its first token until total_timeout ends with the error chunk, byte for byte after what was sent', async () => {
  plan.push('stall');
  let done = false;
  // The first bytes at the client: the gateway read the node's first token (and cleared the deadline) before it sent them on.
  let firstBytes = (): void => {};
  const firstAtClient = new Promise<void>((resolve) => (firstBytes = resolve));
  const answered = request(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true }),
    signal: AbortSignal.timeout(60_000),
  }).then(async (res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of res.body) {
      chunks.push(chunk as Buffer);
      firstBytes();
    }
    return { res, text: Buffer.concat(chunks).toString('utf8') };
  });
  void answered.finally(() => (done = true)).catch(() => {});
  await untilEvent(() => met.length === 1, nodeActivity(), 'the node has the request');
  // Bounded by the request's own 60 s signal: an answer that ends (or fails) without bytes ends the wait too.
  await Promise.race([
    firstAtClient,
    answered.then(
      () => undefined,
      () => undefined,
    ),
  ]);
  // The first token came: the deadline no longer applies; the total timeout (1 h) ends the exchange.
  clock.advance(DEADLINE_MS * 2);
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(done, false, 'a stream that started is not abandoned at the first-token deadline');
  await advanceUntil(clock, () => done, 'the total timeout', { stepMs: 600_000 });
  const { res, text } = await answered;
  assert.equal(res.statusCode, 200);
  const sent = CHAT_STREAM.slice(0, 2).join('');
  assert.ok(text.startsWith(sent), text);
  const error = JSON.parse(
    text
      .slice(sent.length)
      .replace(/^data: /, '')
      .trim(),
  ) as { error: Record<string, unknown> };
  assert.equal(text.slice(sent.length, sent.length + 6), 'data: ');
  assert.ok(text.endsWith('\n\n') && !text.includes('[DONE]'));
  assert.equal(error.error.type, 'server_error');
  assert.equal(error.error.code, 'upstream_stream_broken');
  assert.match(String(error.error.message), /upstream exchange exceeded 3600000ms/);
  assert.equal(met.length, 1, 'never failed over after the first byte');
});
