// Contract: the simulated servers answer tool-calling requests as the real ones do, in every API
// they speak — OpenAI chat (`tool_calls`, streamed deltas with index/id/argument pieces,
// finish_reason "tool_calls"), Responses (`function_call` items and their argument events),
// Anthropic Messages (`tool_use` blocks, `input_json_delta`, stop_reason "tool_use") and Ollama's
// /api/chat (`tool_calls` with object arguments) — and, with `answers = "natural"`, end a text
// answer by themselves ("stop") unless a smaller max_tokens cuts it ("length").

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startSimNode, type SimNode } from '#src/sim/index.ts';
import { call, json, list, record, sseData, sseMessages } from '#test/unit/sim/dialects/sim-http.ts';

const CHAT_KINDS = ['llamacpp', 'vllm', 'sglang', 'ollama'] as const;
const MESSAGES_KINDS = ['llamacpp', 'vllm', 'ollama'] as const;
type Kind = (typeof CHAT_KINDS)[number];

const SCHEMA = {
  type: 'object',
  properties: { command: { type: 'string' }, timeout: { type: 'integer' } },
  required: ['command'],
};
const CHAT_TOOLS = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'The weather in a city',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  },
  { type: 'function', function: { name: 'shell', description: 'Runs a shell command, lists files', parameters: SCHEMA } },
];
const USER = [{ role: 'user', content: 'list the files here' }];

describe('tool calls and natural answers on the simulated servers', () => {
  const nodes: Partial<Record<Kind, SimNode>> = {};
  before(async () => {
    for (const kind of CHAT_KINDS) {
      nodes[kind] = await startSimNode({
        kind,
        models: ['coder'],
        contextTokens: 4096,
        ttftMs: 1,
        tokensPerSecond: 5000,
        answers: 'natural',
      });
    }
  });
  after(async () => {
    for (const node of Object.values(nodes)) await node?.close();
  });
  const url = (kind: Kind): string => nodes[kind]?.url ?? assert.fail(`no ${kind} node`);
  const model = (kind: Kind): string => (kind === 'ollama' ? 'coder:latest' : 'coder');

  /** The call a chat stream carries, from its deltas joined by index (as the OpenAI SDK does). */
  function streamedChatCall(text: string): { id: unknown; name: unknown; args: string; finish: unknown; content: string } {
    let id: unknown;
    let name: unknown;
    let args = '';
    let finish: unknown;
    let content = '';
    for (const data of sseData(text)) {
      if (data === '[DONE]') continue;
      for (const choice of list(record(data)['choices'])) {
        const c = record(choice);
        if (c['finish_reason'] !== null && c['finish_reason'] !== undefined) finish = c['finish_reason'];
        const delta = record(c['delta']);
        if (typeof delta['content'] === 'string') content += delta['content'];
        for (const piece of Array.isArray(delta['tool_calls']) ? delta['tool_calls'] : []) {
          const p = record(piece);
          assert.equal(p['index'], 0);
          const fn = record(p['function']);
          if (p['id'] !== undefined) id = p['id'];
          if (fn['name'] !== undefined) name = fn['name'];
          if (typeof fn['arguments'] === 'string') args += fn['arguments'];
        }
      }
    }
    return { id, name, args, finish, content };
  }

  for (const kind of CHAT_KINDS) {
    test(`${kind}: chat with tools answers a tool call, whole and streamed`, async () => {
      const body = { model: model(kind), messages: USER, tools: CHAT_TOOLS };
      const whole = await call(url(kind), 'POST', '/v1/chat/completions', { body });
      assert.equal(whole.status, 200, whole.text);
      const [choice] = list(record(json(whole))['choices']).map(record);
      assert.equal(choice?.['finish_reason'], 'tool_calls');
      const message = record(choice?.['message']);
      const [toolCall] = list(message['tool_calls']).map(record);
      assert.equal(record(toolCall?.['function'])['name'], 'shell');
      assert.deepEqual(JSON.parse(String(record(toolCall?.['function'])['arguments'])), { command: 'ls' });
      assert.match(String(toolCall?.['id']), /^call_/);
      assert.equal(toolCall?.['type'], 'function');

      const streamed = await call(url(kind), 'POST', '/v1/chat/completions', { body: { ...body, stream: true } });
      const got = streamedChatCall(streamed.text);
      assert.deepEqual(
        { id: got.id, name: got.name, args: JSON.parse(got.args), finish: got.finish, content: got.content },
        { id: toolCall?.['id'], name: 'shell', args: { command: 'ls' }, finish: 'tool_calls', content: '' },
      );
      assert.equal(sseData(streamed.text).at(-1), '[DONE]');
    });

    test(`${kind}: tool_choice none, a named tool, and a text answer after the tool's result`, async () => {
      const none = await call(url(kind), 'POST', '/v1/chat/completions', {
        body: { model: model(kind), messages: USER, tools: CHAT_TOOLS, tool_choice: 'none' },
      });
      const noneChoice = record(list(record(json(none))['choices'])[0]);
      assert.equal(noneChoice['finish_reason'], 'stop');
      assert.match(String(record(noneChoice['message'])['content']), /^You said "list the files here"/);

      const named = await call(url(kind), 'POST', '/v1/chat/completions', {
        body: {
          model: model(kind),
          messages: [{ role: 'user', content: 'Paris?' }],
          tools: CHAT_TOOLS,
          tool_choice: { type: 'function', function: { name: 'get_weather' } },
        },
      });
      const namedCall = record(list(record(record(list(record(json(named))['choices'])[0])['message'])['tool_calls'])[0]);
      assert.equal(record(namedCall['function'])['name'], 'get_weather');
      assert.deepEqual(JSON.parse(String(record(namedCall['function'])['arguments'])), { city: 'sim' });

      const messages = [
        ...USER,
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'shell', arguments: '{"command":"ls"}' } }],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'README.md package.json' },
      ];
      const final = await call(url(kind), 'POST', '/v1/chat/completions', {
        body: { model: model(kind), messages, tools: CHAT_TOOLS, stream: true },
      });
      const got = streamedChatCall(final.text);
      assert.equal(got.finish, 'stop');
      assert.equal(got.name, undefined);
      assert.equal(got.content, 'The shell tool answered "README.md package.json". That is all I needed: the task is done.');
    });

    test(`${kind}: a natural answer ends with stop under a large max_tokens, and a small one cuts it`, async () => {
      const big = await call(url(kind), 'POST', '/v1/chat/completions', {
        body: { model: model(kind), messages: [{ role: 'user', content: 'Hello!' }], max_tokens: 3000 },
      });
      const body = record(json(big));
      assert.equal(record(list(body['choices'])[0])['finish_reason'], 'stop');
      const tokens = Number(record(body['usage'])['completion_tokens']);
      assert.ok(tokens > 5 && tokens < 40, `${tokens} tokens`);
      const small = await call(url(kind), 'POST', '/v1/chat/completions', {
        body: { model: model(kind), messages: [{ role: 'user', content: 'Hello!' }], max_tokens: 3 },
      });
      const smallBody = record(json(small));
      assert.equal(record(list(smallBody['choices'])[0])['finish_reason'], 'length');
      assert.equal(record(smallBody['usage'])['completion_tokens'], 3);
      const cut = await call(url(kind), 'POST', '/v1/chat/completions', {
        body: { model: model(kind), messages: USER, tools: CHAT_TOOLS, max_tokens: 2 },
      });
      assert.equal(record(list(record(json(cut))['choices'])[0])['finish_reason'], 'length');
    });

    test(`${kind}: responses answers a function_call item, whole and as argument events`, async () => {
      const tools = [{ type: 'function', name: 'shell', description: 'Runs a shell command', parameters: SCHEMA }];
      const body = { model: model(kind), input: 'list the files here', tools };
      const whole = await call(url(kind), 'POST', '/v1/responses', { body });
      assert.equal(whole.status, 200, whole.text);
      const response = record(json(whole));
      assert.equal(response['status'], 'completed');
      const [item] = list(response['output']).map(record);
      assert.equal(item?.['type'], 'function_call');
      assert.equal(item?.['name'], 'shell');
      assert.match(String(item?.['call_id']), /^call_/);
      assert.deepEqual(JSON.parse(String(item?.['arguments'])), { command: 'ls' });

      const streamed = await call(url(kind), 'POST', '/v1/responses', { body: { ...body, stream: true } });
      const events = sseMessages(streamed.text);
      const names = events.map((e) => e.event);
      assert.deepEqual(names.slice(0, 2), ['response.created', 'response.output_item.added']);
      assert.deepEqual(names.slice(-3), [
        'response.function_call_arguments.done',
        'response.output_item.done',
        'response.completed',
      ]);
      const deltas = events.filter((e) => e.event === 'response.function_call_arguments.delta');
      assert.equal(deltas.map((e) => String(record(JSON.parse(e.data))['delta'])).join(''), '{"command":"ls"}');

      const input = [
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'list the files here' }] },
        { type: 'function_call', call_id: String(item?.['call_id']), name: 'shell', arguments: '{"command":"ls"}' },
        { type: 'function_call_output', call_id: String(item?.['call_id']), output: 'README.md' },
      ];
      const final = record(json(await call(url(kind), 'POST', '/v1/responses', { body: { model: model(kind), input, tools } })));
      const [message] = list(final['output']).map(record);
      assert.equal(message?.['type'], 'message');
      assert.match(String(record(list(message?.['content'])[0])['text']), /^The shell tool answered "README.md"/);
    });
  }

  for (const kind of MESSAGES_KINDS) {
    test(`${kind}: messages answers a tool_use block, whole and as input_json_delta events`, async () => {
      const tools = [{ name: 'Bash', description: 'Runs a shell command', input_schema: SCHEMA }];
      const body = {
        model: model(kind),
        max_tokens: 1000,
        messages: [{ role: 'user', content: 'list the files here' }],
        tools,
      };
      const whole = await call(url(kind), 'POST', '/v1/messages', { body });
      assert.equal(whole.status, 200, whole.text);
      const message = record(json(whole));
      assert.equal(message['stop_reason'], 'tool_use');
      const [block] = list(message['content']).map(record);
      assert.deepEqual({ ...block, id: undefined }, { type: 'tool_use', id: undefined, name: 'Bash', input: { command: 'ls' } });
      assert.match(String(block?.['id']), /^toolu_/);

      const streamed = await call(url(kind), 'POST', '/v1/messages', { body: { ...body, stream: true } });
      const events = sseMessages(streamed.text).map((e) => ({ event: e.event, data: record(JSON.parse(e.data)) }));
      const start = events.find((e) => e.event === 'content_block_start');
      assert.deepEqual(start?.data['content_block'], { type: 'tool_use', id: block?.['id'], name: 'Bash', input: {} });
      const partialJson = events
        .filter((e) => e.event === 'content_block_delta')
        .map((e) => record(e.data['delta']))
        .map((d) => (assert.equal(d['type'], 'input_json_delta'), String(d['partial_json'])))
        .join('');
      assert.deepEqual(JSON.parse(partialJson), { command: 'ls' });
      const delta = events.find((e) => e.event === 'message_delta');
      assert.equal(record(delta?.data['delta'])['stop_reason'], 'tool_use');

      const messages = [
        { role: 'user', content: 'list the files here' },
        { role: 'assistant', content: [block] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: block?.['id'], content: 'README.md' }] },
      ];
      const final = record(json(await call(url(kind), 'POST', '/v1/messages', { body: { ...body, messages } })));
      assert.equal(final['stop_reason'], 'end_turn');
      assert.match(String(record(list(final['content'])[0])['text']), /^The Bash tool answered "README.md"/);
      const forced = record(
        json(await call(url(kind), 'POST', '/v1/messages', { body: { ...body, messages, tool_choice: { type: 'any' } } })),
      );
      assert.equal(forced['stop_reason'], 'tool_use');
    });
  }

  test('ollama: /api/chat answers tool_calls with object arguments, whole and streamed', async () => {
    const body = { model: 'coder', messages: USER, tools: CHAT_TOOLS, stream: false };
    const whole = record(json(await call(url('ollama'), 'POST', '/api/chat', { body })));
    assert.equal(whole['done_reason'], 'stop');
    const message = record(whole['message']);
    assert.equal(message['content'], '');
    const [toolCall] = list(message['tool_calls']).map(record);
    assert.deepEqual(record(toolCall?.['function']), { index: 0, name: 'shell', arguments: { command: 'ls' } });

    const streamed = await call(url('ollama'), 'POST', '/api/chat', { body: { ...body, stream: true } });
    const lines = streamed.text
      .trim()
      .split('\n')
      .map((l) => record(JSON.parse(l)));
    assert.equal(lines.length, 2, streamed.text);
    assert.deepEqual(record(lines[0]?.['message'])['tool_calls'], message['tool_calls']);
    assert.equal(lines[1]?.['done'], true);

    const after = record(
      json(
        await call(url('ollama'), 'POST', '/api/chat', {
          body: {
            ...body,
            messages: [
              ...USER,
              { role: 'assistant', content: '', tool_calls: message['tool_calls'] },
              { role: 'tool', content: 'a.txt' },
            ],
          },
        }),
      ),
    );
    assert.match(String(record(after['message'])['content']), /^The shell tool answered "a.txt"/);
  });
});
