// Issue 40, item 2: Claude Code speaks Anthropic's Messages API; a fleet whose nodes speak only
// Chat Completions (kind `openai`) answered it 404 endpoint_unsupported. The gateway now translates:
// the official, unchanged `@anthropic-ai/sdk` client runs a whole tool loop (tool_use, then the
// tool_result, then end_turn), a stream (`messages.stream` … `finalMessage`), and gets Anthropic-shaped
// errors (a model no node serves: 404; a block no Chat Completions node can read: 400 naming it);
// the answers say `x-switchyard-translated: messages->chat`, the request log and the metrics say it
// was translated, and the nodes are only ever asked /v1/chat/completions. A fleet with a node that
// speaks /v1/messages itself is never translated for (the native node serves), and
// `[routing] translate = false` turns translation off.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import type { FleetAndGateway } from '#test/fixtures/in-process-fleet.ts';
import { startChatOnlyFleet } from '#test/fixtures/chat-only-fleet.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { requestEnds } from '#test/fixtures/gateway-waits.ts';
import { httpJson, simRequests } from '#test/fixtures/http.ts';

const TRANSLATED = 'messages→chat';
/** The header's ASCII form of the name (a header carries no arrow). */
const TRANSLATED_HEADER = 'messages->chat';
const TOOLS: Anthropic.Tool[] = [
  {
    name: 'Bash',
    description: 'Run a shell command',
    input_schema: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
  },
];

let env: FleetAndGateway;
let client: Anthropic;

before(async () => {
  env = await startChatOnlyFleet({ translate: true, legacy: true });
  client = new Anthropic({ baseURL: env.gw.url, apiKey: 'unused', maxRetries: 0, timeout: 20_000 });
});

after(async () => {
  await env?.close();
});

test('a tool loop runs over Chat Completions nodes: tool_use, then the tool_result, then end_turn', async () => {
  const ask: Anthropic.MessageParam = { role: 'user', content: 'list the files here' };
  const first = await client.messages
    .create({
      model: 'coder',
      max_tokens: 256,
      system: [{ type: 'text', text: 'You are a coding agent.' }],
      tools: TOOLS,
      messages: [ask],
    })
    .withResponse();
  assert.equal(first.response.headers.get('x-switchyard-translated'), TRANSLATED_HEADER);
  assert.ok(['chat-a', 'chat-b'].includes(String(first.response.headers.get('x-switchyard-node'))));
  const call = first.data.content.find((block) => block.type === 'tool_use');
  assert.equal(first.data.stop_reason, 'tool_use');
  assert.ok(call !== undefined && call.type === 'tool_use', JSON.stringify(first.data.content));
  assert.equal(call.name, 'Bash');
  assert.equal(typeof (call.input as { command?: unknown }).command, 'string');
  assert.match(first.data.id, /^msg_/);
  assert.equal(first.data.model, 'coder');
  assert.ok(first.data.usage.input_tokens > 0 && first.data.usage.output_tokens > 0);

  const second = await client.messages.create({
    model: 'coder',
    max_tokens: 256,
    tools: TOOLS,
    messages: [
      ask,
      { role: 'assistant', content: first.data.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'README.md\nsrc' }] },
    ],
  });
  assert.equal(second.stop_reason, 'end_turn');
  const text = second.content.find((block) => block.type === 'text');
  assert.ok(text !== undefined && text.type === 'text' && text.text.length > 0, JSON.stringify(second.content));
});

test('messages.stream delivers Anthropic’s events in order, and a final message with its usage', async () => {
  const stream = client.messages.stream({ model: 'coder', max_tokens: 64, messages: [{ role: 'user', content: 'say hello' }] });
  const types: string[] = [];
  stream.on('streamEvent', (event) => types.push(event.type));
  const final = await stream.finalMessage();
  assert.equal(final.stop_reason, 'end_turn');
  assert.ok(final.content[0]?.type === 'text' && final.content[0].text.length > 0);
  assert.ok(final.usage.input_tokens > 0 && final.usage.output_tokens > 0, JSON.stringify(final.usage));
  assert.deepEqual(types.slice(0, 2), ['message_start', 'content_block_start']);
  assert.deepEqual(types.slice(-3), ['content_block_stop', 'message_delta', 'message_stop']);
  assert.ok(types.slice(2, -3).every((t) => t === 'content_block_delta') && types.length > 5, types.join(' '));
});

test('on the wire, each event is named as Anthropic names it, with a ping after the first block starts', async () => {
  const res = await fetch(`${env.gw.url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model: 'coder', max_tokens: 32, stream: true, messages: [{ role: 'user', content: 'say hello' }] }),
  });
  assert.equal(res.status, 200);
  assert.match(String(res.headers.get('content-type')), /^text\/event-stream/);
  const text = await res.text();
  const events = text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const name = /^event: (.+)$/m.exec(block)?.[1];
      const data = JSON.parse(/^data: (.+)$/m.exec(block)?.[1] ?? 'null') as { type?: string };
      assert.equal(data.type, name, block);
      return name;
    });
  assert.deepEqual(events.slice(0, 4), ['message_start', 'content_block_start', 'ping', 'content_block_delta']);
  assert.deepEqual(events.slice(-3), ['content_block_stop', 'message_delta', 'message_stop']);
});

test('a streamed tool call arrives as a tool_use block whose input the SDK parses', async () => {
  const stream = client.messages.stream({
    model: 'coder',
    max_tokens: 256,
    tools: TOOLS,
    tool_choice: { type: 'any' },
    messages: [{ role: 'user', content: 'list the files here' }],
  });
  const final = await stream.finalMessage();
  assert.equal(final.stop_reason, 'tool_use');
  const call = final.content.find((block) => block.type === 'tool_use');
  assert.ok(call !== undefined && call.type === 'tool_use' && call.name === 'Bash', JSON.stringify(final.content));
  assert.equal(typeof (call.input as { command?: unknown }).command, 'string');
});

test('a model no node serves is a 404 in Anthropic’s error shape', async () => {
  await assert.rejects(
    client.messages.create({ model: 'no-such-model', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }),
    (error: unknown) => {
      assert.ok(error instanceof Anthropic.NotFoundError, String(error));
      const body = error.error as { type?: string; error?: { type?: string } };
      assert.equal(body.type, 'error');
      assert.equal(body.error?.type, 'not_found_error');
      return true;
    },
  );
});

test('a block no Chat Completions node can read is refused 400 in Anthropic’s shape, naming the field', async () => {
  const pdf: Anthropic.DocumentBlockParam = {
    type: 'document',
    source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0xLjQK' },
  };
  await assert.rejects(
    client.messages.create({
      model: 'coder',
      max_tokens: 8,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'read this' }, pdf] }],
    }),
    (error: unknown) => {
      assert.ok(error instanceof Anthropic.BadRequestError, String(error));
      const body = error.error as { type?: string; error?: { type?: string; message?: string } };
      assert.equal(body.type, 'error');
      assert.equal(body.error?.type, 'invalid_request_error');
      assert.match(String(body.error?.message), /messages\[0\]\.content\[1\]\.source/);
      return true;
    },
  );
});

test('failover before the first byte works as for any request: a node answering 500 is left for the other', async () => {
  env.sim.node('chat-a').setFaults({ inference: 'error500' });
  try {
    for (let i = 0; i < 4; i++) {
      const { data, response } = await client.messages
        .create({ model: 'coder', max_tokens: 32, messages: [{ role: 'user', content: `hello ${i}` }] })
        .withResponse();
      assert.equal(response.headers.get('x-switchyard-node'), 'chat-b');
      assert.equal(response.headers.get('x-switchyard-translated'), TRANSLATED_HEADER);
      assert.equal(data.stop_reason, 'end_turn');
    }
  } finally {
    env.sim.node('chat-a').setFaults({ inference: 'none' });
  }
});

test('a node error with nothing left to fail over to comes back in Anthropic’s shape, its status kept', async () => {
  for (const name of ['chat-a', 'chat-b']) env.sim.node(name).setFaults({ inference: 'error500' });
  try {
    await assert.rejects(
      client.messages.create({ model: 'coder', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }),
      (error: unknown) => {
        assert.ok(error instanceof Anthropic.InternalServerError, String(error));
        const body = error.error as { type?: string; error?: { type?: string; message?: string } };
        assert.equal(body.type, 'error');
        assert.equal(body.error?.type, 'api_error');
        assert.equal(typeof body.error?.message, 'string');
        return true;
      },
    );
  } finally {
    for (const name of ['chat-a', 'chat-b']) env.sim.node(name).setFaults({ inference: 'none' });
  }
});

test('a stream the node breaks after the first bytes ends with Anthropic’s `event: error`', async () => {
  for (const name of ['chat-a', 'chat-b'])
    env.sim.node(name).setFaults({ inference: 'midstream_reset', midstreamAfterChunks: 2 });
  try {
    const res = await fetch(`${env.gw.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'coder', max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'say hello' }] }),
    });
    assert.equal(res.status, 200);
    const text = await res.text();
    const names = [...text.matchAll(/^event: (.*)$/gm)].map((m) => m[1]);
    assert.equal(names[0], 'message_start');
    assert.equal(names.at(-1), 'error', text);
    assert.ok(!names.includes('message_stop'), 'a broken stream is never made to look whole');
    assert.match(text, /"type":"error","error":\{"type":"api_error","message":"the node's stream broke off/);
  } finally {
    for (const name of ['chat-a', 'chat-b']) env.sim.node(name).setFaults({ inference: 'none' });
  }
});

test('the Chat Completions nodes were only ever asked /v1/chat/completions', async () => {
  for (const node of ['chat-a', 'chat-b']) {
    const posts = (await simRequests(env.sim.url(node))).filter((r) => r.method === 'POST');
    assert.ok(posts.length > 0, `${node} was asked nothing`);
    assert.deepEqual([...new Set(posts.map((r) => r.path))], ['/v1/chat/completions'], node);
  }
});

test('where a node speaks /v1/messages itself, nothing is translated: the native node serves', async () => {
  for (let i = 0; i < 4; i++) {
    const { data, response } = await client.messages
      .create({ model: 'native', max_tokens: 16, messages: [{ role: 'user', content: 'hello' }] })
      .withResponse();
    assert.equal(response.headers.get('x-switchyard-translated'), null);
    assert.equal(response.headers.get('x-switchyard-node'), 'llama');
    assert.equal(data.type, 'message');
  }
  const posts = (await simRequests(env.sim.url('chat-c'))).filter((r) => r.method === 'POST');
  assert.deepEqual(posts, []);
});

test('the request log and the metrics say which requests were translated', async () => {
  type Record = {
    endpoint: string;
    model?: string;
    translated?: string;
    status: number;
    error?: string;
    tokens_from?: string;
    prompt_tokens?: number;
    completion_tokens?: number;
  };
  const records = async (): Promise<Record[]> =>
    ((await (await httpJson('GET', `${env.gw.url}/admin/requests?limit=100`)).json()) as { requests: [] }).requests;
  // The ring takes a request as it finishes: looked at again at each request's end.
  await untilEvent(
    async () => (await records()).some((r) => r.translated === TRANSLATED),
    [requestEnds(env.gw)],
    'a translated request',
  );
  const all = await records();
  const translated = all.filter((r) => r.translated === TRANSLATED);
  assert.ok(translated.every((r) => r.endpoint === '/v1/messages' && r.model === 'coder'));
  // Their tokens are the node's own usage, JSON answers and streams alike, as for a native request.
  const answered = translated.filter((r) => r.status === 200 && r.error === undefined);
  assert.ok(answered.length >= 4);
  for (const r of answered) {
    assert.equal(r.tokens_from, 'usage', JSON.stringify(r));
    assert.ok((r.prompt_tokens ?? 0) > 0 && (r.completion_tokens ?? 0) > 0, JSON.stringify(r));
  }
  const native = all.filter((r) => r.model === 'native');
  assert.ok(native.length > 0 && native.every((r) => r.translated === undefined));
  const metrics = await env.gw.metrics();
  assert.match(metrics, /gateway_translated_requests_total\{translation="messages→chat",status="200"\} [1-9]/);
});

test('a node that shows it lacks /v1/messages (a route-level 404) has that request and the model’s next ones translated', async () => {
  // Its kind (SGLang) was taken to serve /v1/messages: the first request is asked natively, refused
  // with a route-level 404, and re-chosen as translated before any byte reached the client.
  for (let i = 0; i < 2; i += 1) {
    const { data, response } = await client.messages
      .create({ model: 'legacy', max_tokens: 16, messages: [{ role: 'user', content: 'hello' }] })
      .withResponse();
    assert.equal(response.headers.get('x-switchyard-translated'), TRANSLATED_HEADER);
    assert.equal(response.headers.get('x-switchyard-node'), 'sg');
    assert.equal(data.type, 'message');
  }
  const posts = (await simRequests(env.sim.url('sg'))).filter((r) => r.method === 'POST').map((r) => r.path);
  assert.deepEqual(posts, ['/v1/messages', '/v1/chat/completions', '/v1/chat/completions']);
});

test('/admin/explain says a Messages request for the model is translated, and judges the nodes on /v1/chat/completions', async () => {
  const translated = (await env.gw.explain('model=coder&endpoint=/v1/messages')) as Awaited<ReturnType<typeof env.gw.explain>> & {
    translated?: { translation: string; endpoint: string };
  };
  assert.deepEqual(translated.translated, { translation: TRANSLATED, endpoint: '/v1/chat/completions' });
  // Judged on the node endpoint: no Chat Completions node is excluded for the endpoint (the earlier faults may have ejected one).
  for (const name of ['chat-a', 'chat-b'])
    assert.notEqual(translated.nodes.find((n) => n.node === name)?.reason, 'endpoint_unsupported');
  const plain = (await env.gw.explain('model=coder&endpoint=/v1/chat/completions')) as typeof translated;
  assert.equal(plain.translated, undefined);
  const native = (await env.gw.explain('model=native&endpoint=/v1/messages')) as typeof translated;
  assert.equal(native.translated, undefined);
  assert.equal(native.nodes.find((n) => n.node === 'llama')?.verdict, 'eligible');
  assert.equal(native.nodes.find((n) => n.node === 'chat-c')?.reason, 'endpoint_unsupported');
});

test('[routing] translate = false: the Chat Completions nodes are not used for Messages (404 endpoint_unsupported)', async () => {
  const other = await startChatOnlyFleet({ translate: false, legacy: true });
  try {
    const off = new Anthropic({ baseURL: other.gw.url, apiKey: 'unused', maxRetries: 0, timeout: 20_000 });
    await assert.rejects(
      off.messages.create({ model: 'coder', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }),
      (error: unknown) => {
        assert.ok(error instanceof Anthropic.NotFoundError, String(error));
        assert.match(JSON.stringify(error.error), /endpoint_unsupported/);
        return true;
      },
    );
    assert.equal(
      ((await other.gw.explain('model=coder&endpoint=/v1/messages')) as { translated?: unknown }).translated,
      undefined,
    );
  } finally {
    await other.close();
  }
});
