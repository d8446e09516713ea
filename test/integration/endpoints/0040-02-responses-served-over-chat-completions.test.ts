// Issue 40, item 2: Codex speaks the OpenAI Responses API; a fleet whose nodes speak only Chat
// Completions (kind `openai`) answered it 404 endpoint_unsupported. The gateway now translates: the
// official, unchanged `openai` client runs a function_call round trip (function_call, then its
// function_call_output, then a text answer), a stream (`stream: true` events in OpenAI's order with
// their sequence numbers, and `responses.stream(…).finalResponse()`), an answer cut at
// max_output_tokens (`incomplete`), and gets OpenAI-shaped errors (a model no node serves: 404; a
// previous_response_id a chat node cannot honour: 400 naming it). The answers say
// `x-switchyard-translated: responses->chat`, and the nodes are only ever asked
// /v1/chat/completions. Where a node speaks /v1/responses itself, nothing is translated.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import type { FleetAndGateway } from '#test/fixtures/in-process-fleet.ts';
import { startChatOnlyFleet } from '#test/fixtures/chat-only-fleet.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { requestEnds } from '#test/fixtures/gateway-waits.ts';
import { httpJson, setSimFaults, simRequests } from '#test/fixtures/http.ts';

const TRANSLATED = 'responses→chat';
/** The header's ASCII form of the translation's name. */
const TRANSLATED_HEADER = 'responses->chat';

/** Codex's shell tool, as Codex 0.171 declares it (shortened). */
const TOOLS: OpenAI.Responses.Tool[] = [
  {
    type: 'function',
    name: 'exec_command',
    description: 'Runs a command in a PTY, returning output or a session ID for ongoing interaction.',
    strict: false,
    parameters: {
      type: 'object',
      properties: { cmd: { type: 'string', description: 'Shell command to execute.' } },
      required: ['cmd'],
      additionalProperties: false,
    },
  },
  { type: 'web_search' },
];

let env: FleetAndGateway;
let client: OpenAI;

before(async () => {
  env = await startChatOnlyFleet();
  client = new OpenAI({ baseURL: `${env.gw.url}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 20_000 });
});

after(async () => {
  await env?.close();
});

test('a function_call round trip over Chat Completions nodes: the call, its output, then a text answer', async () => {
  const ask: OpenAI.Responses.ResponseInputItem = { role: 'user', content: 'list the files here' };
  const first = await client.responses
    .create({ model: 'coder', instructions: 'You are a coding agent.', input: [ask], tools: TOOLS, store: false })
    .withResponse();
  assert.equal(first.response.headers.get('x-switchyard-translated'), TRANSLATED_HEADER);
  assert.ok(['chat-a', 'chat-b'].includes(String(first.response.headers.get('x-switchyard-node'))));
  const response = first.data;
  assert.match(response.id, /^resp_/);
  assert.equal(response.object, 'response');
  assert.equal(response.status, 'completed');
  assert.equal(response.model, 'coder');
  const call = response.output.find((item) => item.type === 'function_call');
  assert.ok(call !== undefined && call.type === 'function_call', JSON.stringify(response.output));
  assert.equal(call.name, 'exec_command');
  assert.equal(typeof (JSON.parse(call.arguments) as { cmd?: unknown }).cmd, 'string');
  assert.ok(call.call_id.length > 0);
  assert.ok(response.usage !== undefined && response.usage.input_tokens > 0 && response.usage.output_tokens > 0);
  assert.equal(response.usage.total_tokens, response.usage.input_tokens + response.usage.output_tokens);

  const second = await client.responses.create({
    model: 'coder',
    instructions: 'You are a coding agent.',
    tools: TOOLS,
    store: false,
    input: [
      ask,
      { type: 'function_call', call_id: call.call_id, name: call.name, arguments: call.arguments },
      { type: 'function_call_output', call_id: call.call_id, output: 'README.md\nnotes.txt\n' },
    ],
  });
  assert.equal(second.status, 'completed');
  assert.ok(
    second.output.every((item) => item.type !== 'function_call'),
    JSON.stringify(second.output),
  );
  assert.match(second.output_text, /README\.md/, 'the answer read the tool output');
});

test('stream: true delivers the Responses events in order, numbered from 0, ending with response.completed', async () => {
  const stream = await client.responses.create({ model: 'coder', input: 'say hello', stream: true });
  const events: OpenAI.Responses.ResponseStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  const types = events.map((event) => event.type);
  assert.deepEqual(types.slice(0, 4), [
    'response.created',
    'response.in_progress',
    'response.output_item.added',
    'response.content_part.added',
  ]);
  assert.deepEqual(types.slice(-4), [
    'response.output_text.done',
    'response.content_part.done',
    'response.output_item.done',
    'response.completed',
  ]);
  assert.ok(types.slice(4, -4).every((type) => type === 'response.output_text.delta') && types.length > 8, types.join(' '));
  assert.deepEqual(
    events.map((event) => event.sequence_number),
    events.map((_, index) => index),
  );
  const completed = events.at(-1);
  assert.ok(completed?.type === 'response.completed');
  assert.ok((completed.response.usage?.output_tokens ?? 0) > 0, 'the node was asked for its usage');
  const text = events.flatMap((event) => (event.type === 'response.output_text.delta' ? [event.delta] : [])).join('');
  assert.ok(text.length > 0);
});

test('responses.stream(…).finalResponse(): a streamed function call the SDK assembles', async () => {
  const final = await client.responses
    .stream({ model: 'coder', input: 'list the files here', tools: TOOLS, tool_choice: 'required' })
    .finalResponse();
  assert.equal(final.status, 'completed');
  const call = final.output.find((item) => item.type === 'function_call');
  assert.ok(call !== undefined && call.type === 'function_call', JSON.stringify(final.output));
  assert.equal(call.name, 'exec_command');
  assert.equal(typeof (JSON.parse(call.arguments) as { cmd?: unknown }).cmd, 'string');
  const text = await client.responses.stream({ model: 'coder', input: 'say hello' }).finalResponse();
  assert.ok(text.output_text.length > 0);
});

test('an answer cut at max_output_tokens is incomplete, with the reason', async () => {
  const response = await client.responses.create({
    model: 'coder',
    input: 'tell me a long story about the sea',
    max_output_tokens: 2,
  });
  assert.equal(response.status, 'incomplete');
  assert.deepEqual(response.incomplete_details, { reason: 'max_output_tokens' });
});

test('a model no node serves is a 404 in OpenAI’s error shape', async () => {
  await assert.rejects(client.responses.create({ model: 'no-such-model', input: 'hi' }), (error: unknown) => {
    assert.ok(error instanceof OpenAI.NotFoundError, String(error));
    assert.equal(typeof (error.error as { message?: unknown }).message, 'string');
    return true;
  });
});

test('previous_response_id, which a chat node cannot honour, is refused 400 naming the field', async () => {
  await assert.rejects(
    client.responses.create({ model: 'coder', input: 'and then?', previous_response_id: 'resp_123' }),
    (error: unknown) => {
      assert.ok(error instanceof OpenAI.BadRequestError, String(error));
      assert.match(String((error.error as { message?: unknown }).message), /previous_response_id/);
      return true;
    },
  );
});

test('the Chat Completions nodes were only ever asked /v1/chat/completions', async () => {
  for (const node of ['chat-a', 'chat-b']) {
    const posts = (await simRequests(env.sim.url(node))).filter((r) => r.method === 'POST');
    assert.ok(posts.length > 0, `${node} was asked nothing`);
    assert.deepEqual([...new Set(posts.map((r) => r.path))], ['/v1/chat/completions'], node);
  }
});

test('where a node speaks /v1/responses itself, nothing is translated: the native node serves', async () => {
  for (let i = 0; i < 4; i++) {
    const { data, response } = await client.responses.create({ model: 'native', input: 'hello' }).withResponse();
    assert.equal(response.headers.get('x-switchyard-translated'), null);
    assert.equal(response.headers.get('x-switchyard-node'), 'llama');
    assert.equal(data.object, 'response');
  }
  const posts = (await simRequests(env.sim.url('chat-c'))).filter((r) => r.method === 'POST');
  assert.deepEqual(posts, []);
});

test('the request log and the metrics say which requests were translated', async () => {
  const records = async (): Promise<{ endpoint: string; model?: string; translated?: string; status: number }[]> =>
    ((await (await httpJson('GET', `${env.gw.url}/admin/requests?limit=100`)).json()) as { requests: [] }).requests;
  // The ring takes a request as it finishes: looked at again at each request's end.
  await untilEvent(
    async () => (await records()).some((r) => r.translated === TRANSLATED),
    [requestEnds(env.gw)],
    'a translated request',
  );
  const all = await records();
  const translated = all.filter((r) => r.translated === TRANSLATED);
  assert.ok(translated.every((r) => r.endpoint === '/v1/responses' && r.model === 'coder'));
  const native = all.filter((r) => r.model === 'native');
  assert.ok(native.length > 0 && native.every((r) => r.translated === undefined));
  assert.match(await env.gw.metrics(), /gateway_translated_requests_total\{translation="responses→chat",status="200"\} [1-9]/);
});

// Faults last: a broken node must not leave the tests above with fewer nodes.
test('a stream that breaks after its first events ends with response.failed, then an error event the SDK throws', async () => {
  for (const node of ['chat-a', 'chat-b'])
    await setSimFaults(env.sim.url(node), { inference: 'midstream_reset', midstreamAfterChunks: 3 });
  try {
    const res = await fetch(`${env.gw.url}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'coder', input: 'tell me a long story about the sea', stream: true }),
    });
    assert.equal(res.status, 200);
    const events = (await res.text())
      .split('\n\n')
      .filter((block) => block.trim() !== '')
      .map((block) => JSON.parse(/^data: (.+)$/m.exec(block)?.[1] ?? 'null') as { type: string; response?: { status: string } });
    assert.equal(events[0]?.type, 'response.created');
    assert.deepEqual(
      events.slice(-2).map((event) => event.type),
      ['response.failed', 'error'],
    );
    assert.equal(events.at(-2)?.response?.status, 'failed');
    await assert.rejects(
      client.responses.stream({ model: 'coder', input: 'tell me a long story about the sea' }).finalResponse(),
      (error: unknown) => error instanceof OpenAI.APIError && /broke/.test(error.message),
    );
  } finally {
    for (const node of ['chat-a', 'chat-b']) await setSimFaults(env.sim.url(node), { inference: 'none' });
  }
});
