// Anthropic Messages requests → Chat Completions bodies (src/translate/messages/chat-request.ts and
// its parts), one table row per rule.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chatRequest } from '#src/translate/messages/chat-request.ts';
import type { MessagesMemo } from '#src/translate/messages/memo.ts';

type Json = Record<string, unknown>;
const base = { model: 'coder', max_tokens: 100 };
const user = (content: unknown): Json => ({ role: 'user', content });

function carried(body: Json): { body: Json; memo: MessagesMemo; stream: boolean } {
  const out = chatRequest(body);
  assert.equal(out.kind, 'translated', JSON.stringify(out));
  if (out.kind !== 'translated') throw new Error('unreachable');
  return { body: out.body, memo: out.memo as MessagesMemo, stream: out.stream };
}

const CASES: readonly { name: string; body: Json; expect: Json }[] = [
  {
    name: 'a system string is the first message',
    body: { ...base, system: 'be brief', messages: [user('hi')] },
    expect: {
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'hi' },
      ],
    },
  },
  {
    name: 'system text blocks are joined by a blank line; cache_control is dropped',
    body: {
      ...base,
      system: [
        { type: 'text', text: 'one', cache_control: { type: 'ephemeral' } },
        { type: 'text', text: 'two' },
      ],
      messages: [user('hi')],
    },
    expect: {
      messages: [
        { role: 'system', content: 'one\n\ntwo' },
        { role: 'user', content: 'hi' },
      ],
    },
  },
  {
    name: 'text blocks of a user turn are one string',
    body: {
      ...base,
      messages: [
        user([
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b', cache_control: {} },
        ]),
      ],
    },
    expect: { messages: [{ role: 'user', content: 'a\n\nb' }] },
  },
  {
    name: 'images: a base64 source as a data URL, a url source as it is',
    body: {
      ...base,
      messages: [
        user([
          { type: 'text', text: 'look' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } },
          { type: 'image', source: { type: 'url', url: 'https://example.test/cat.jpg' } },
        ]),
      ],
    },
    expect: {
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'look' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
            { type: 'image_url', image_url: { url: 'https://example.test/cat.jpg' } },
          ],
        },
      ],
    },
  },
  {
    name: 'an assistant turn: text as content, tool_use as tool_calls, thinking as reasoning_content',
    body: {
      ...base,
      messages: [
        user('go'),
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'hmm', signature: 'sig' },
            { type: 'redacted_thinking', data: 'xx' },
            { type: 'text', text: 'Running it.' },
            { type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'ls' } },
          ],
        },
      ],
    },
    expect: {
      messages: [
        { role: 'user', content: 'go' },
        {
          role: 'assistant',
          content: 'Running it.',
          tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'Bash', arguments: '{"command":"ls"}' } }],
          reasoning_content: 'hmm',
        },
      ],
    },
  },
  {
    name: 'tool results are tool messages in order, before the rest of the turn; is_error is carried in the content',
    body: {
      ...base,
      messages: [
        user([
          { type: 'text', text: 'both done' },
          { type: 'tool_result', tool_use_id: 'a', content: 'one' },
          { type: 'tool_result', tool_use_id: 'b', content: [{ type: 'text', text: 'no such file' }], is_error: true },
          { type: 'tool_result', tool_use_id: 'c' },
        ]),
      ],
    },
    expect: {
      messages: [
        { role: 'tool', tool_call_id: 'a', content: 'one' },
        { role: 'tool', tool_call_id: 'b', content: 'Error: no such file' },
        { role: 'tool', tool_call_id: 'c', content: '' },
        { role: 'user', content: 'both done' },
      ],
    },
  },
  {
    name: 'a system turn inside the conversation stays a system message in its place',
    body: { ...base, messages: [user('hi'), { role: 'system', content: [{ type: 'text', text: '# Environment' }] }] },
    expect: {
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'system', content: '# Environment' },
      ],
    },
  },
  {
    name: 'tools: input_schema becomes the function parameters',
    body: {
      ...base,
      messages: [user('x')],
      tools: [
        { name: 'Read', description: 'read a file', input_schema: { type: 'object', properties: { path: { type: 'string' } } } },
      ],
    },
    expect: {
      tools: [
        {
          type: 'function',
          function: {
            name: 'Read',
            parameters: { type: 'object', properties: { path: { type: 'string' } } },
            description: 'read a file',
          },
        },
      ],
    },
  },
  {
    name: 'tool_choice any is required, and disable_parallel_tool_use turns parallel calls off',
    body: {
      ...base,
      messages: [user('x')],
      tools: [{ name: 'T', input_schema: { type: 'object' } }],
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
    },
    expect: { tool_choice: 'required', parallel_tool_calls: false },
  },
  {
    name: 'tool_choice tool names the function',
    body: {
      ...base,
      messages: [user('x')],
      tools: [{ name: 'T', input_schema: { type: 'object' } }],
      tool_choice: { type: 'tool', name: 'T' },
    },
    expect: { tool_choice: { type: 'function', function: { name: 'T' } } },
  },
  {
    name: 'tool_choice auto and none',
    body: {
      ...base,
      messages: [user('x')],
      tools: [{ name: 'T', input_schema: { type: 'object' } }],
      tool_choice: { type: 'none' },
    },
    expect: { tool_choice: 'none' },
  },
  {
    name: 'stop_sequences, sampling and metadata.user_id',
    body: {
      ...base,
      messages: [user('x')],
      stop_sequences: ['END'],
      temperature: 0.2,
      top_p: 0.9,
      top_k: 40,
      metadata: { user_id: 'u-1' },
    },
    expect: { stop: ['END'], temperature: 0.2, top_p: 0.9, top_k: 40, user: 'u-1', max_tokens: 100 },
  },
  {
    name: 'thinking enabled: the chat template asked to think, with llama-server’s budget field',
    body: { ...base, messages: [user('x')], thinking: { type: 'enabled', budget_tokens: 2048 } },
    expect: { chat_template_kwargs: { enable_thinking: true }, thinking_budget_tokens: 2048 },
  },
  {
    name: 'thinking disabled: the chat template asked not to',
    body: { ...base, messages: [user('x')], thinking: { type: 'disabled' } },
    expect: { chat_template_kwargs: { enable_thinking: false } },
  },
  {
    name: 'a stream asks for the usage',
    body: { ...base, messages: [user('x')], stream: true },
    expect: { stream: true, stream_options: { include_usage: true } },
  },
];

for (const c of CASES) {
  test(`request: ${c.name}`, () => {
    const { body } = carried(c.body);
    for (const [key, value] of Object.entries(c.expect)) assert.deepEqual(body[key], value, key);
    assert.equal(body.model, 'coder');
  });
}

test('request: dropped members (service_tier, context_management, an unknown one) are not sent', () => {
  const { body } = carried({ ...base, messages: [user('x')], service_tier: 'auto', context_management: {}, betas: ['x'] });
  assert.deepEqual(Object.keys(body).sort(), ['max_tokens', 'messages', 'model']);
});

test('request: the memo remembers the stop sequences and whether thinking is off', () => {
  assert.deepEqual(carried({ ...base, messages: [user('x')], stop_sequences: ['A'] }).memo, {
    stopSequences: ['A'],
    thinkingOff: false,
  });
  assert.deepEqual(carried({ ...base, messages: [user('x')], thinking: { type: 'disabled' } }).memo, {
    stopSequences: [],
    thinkingOff: true,
  });
});

const UNCARRIED: readonly { name: string; body: Json; field: string }[] = [
  {
    name: 'a PDF document',
    body: {
      ...base,
      messages: [user([{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'x' } }])],
    },
    field: 'messages[0].content[0].source',
  },
  {
    name: 'an image from the Files API',
    body: { ...base, messages: [user([{ type: 'image', source: { type: 'file', file_id: 'f' } }])] },
    field: 'messages[0].content[0].source.type',
  },
  {
    name: 'one of Anthropic’s own tools',
    body: { ...base, messages: [user('x')], tools: [{ type: 'web_search_20250305', name: 'web_search' }] },
    field: 'tools[0].type',
  },
  {
    name: 'MCP servers',
    body: { ...base, messages: [user('x')], mcp_servers: [{ type: 'url', url: 'https://x', name: 'x' }] },
    field: 'mcp_servers',
  },
  {
    name: 'a role other than user, assistant or system',
    body: { ...base, messages: [{ role: 'tool', content: 'x' }] },
    field: 'messages[0].role',
  },
  {
    name: 'a server tool result in an assistant turn',
    body: {
      ...base,
      messages: [{ role: 'assistant', content: [{ type: 'web_search_tool_result', tool_use_id: 'x', content: [] }] }],
    },
    field: 'messages[0].content[0].type',
  },
  { name: 'messages that are not an array', body: { ...base, messages: 'hi' }, field: 'messages' },
];

for (const c of UNCARRIED) {
  test(`request: ${c.name} cannot be carried, and the field is named`, () => {
    const out = chatRequest(c.body);
    assert.equal(out.kind, 'untranslatable');
    if (out.kind !== 'untranslatable') return;
    assert.equal(out.field, c.field);
    assert.ok(out.message.startsWith(`${c.field}: `), out.message);
  });
}

test('request: a plain-text document is carried as its text', () => {
  const { body } = carried({
    ...base,
    messages: [user([{ type: 'document', title: 'notes', source: { type: 'text', media_type: 'text/plain', data: 'hello' } }])],
  });
  assert.deepEqual(body.messages, [{ role: 'user', content: 'notes\n\nhello' }]);
});
