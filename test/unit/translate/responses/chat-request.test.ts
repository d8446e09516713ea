// A Responses request → the chat request a node answers: each carried field in its chat name, a
// stream asking for usage, what needs OpenAI's store refused by name; and Codex 0.171's own first
// and second turn (shortened from a captured request) carried whole.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chatRequest } from '#src/translate/responses/chat-request.ts';
import type { ResponsesMemo } from '#src/translate/responses/memo.ts';
import type { JsonObject, TranslatedRequest } from '#src/translate/translation.ts';
import { CONTEXT } from '#test/unit/translate/responses/chat-stream.ts';

function translated(body: JsonObject): TranslatedRequest {
  const result = chatRequest(body, CONTEXT);
  assert.equal(result.kind, 'translated', JSON.stringify(result));
  return result as TranslatedRequest;
}

const BASE = { model: 'coder', input: 'hi' };

const FIELDS: readonly { name: string; body: JsonObject; chat: JsonObject }[] = [
  { name: 'max_output_tokens → max_tokens', body: { max_output_tokens: 64 }, chat: { max_tokens: 64 } },
  { name: 'temperature and top_p as they are', body: { temperature: 0.2, top_p: 0.9 }, chat: { temperature: 0.2, top_p: 0.9 } },
  {
    name: 'reasoning.effort → reasoning_effort',
    body: { reasoning: { effort: 'high', summary: 'auto' } },
    chat: { reasoning_effort: 'high' },
  },
  {
    name: 'text.format json_schema → response_format json_schema',
    body: { text: { format: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true } } },
    chat: { response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object' }, strict: true } } },
  },
  {
    name: 'text.format json_object → response_format json_object',
    body: { text: { format: { type: 'json_object' } } },
    chat: { response_format: { type: 'json_object' } },
  },
  {
    name: 'user, safety_identifier and prompt_cache_key carried',
    body: { user: 'u1', safety_identifier: 's1', prompt_cache_key: 'k1' },
    chat: { user: 'u1', safety_identifier: 's1', prompt_cache_key: 'k1' },
  },
  {
    name: 'a stream asks the node for its usage',
    body: { stream: true },
    chat: { stream: true, stream_options: { include_usage: true } },
  },
];

for (const { name, body, chat } of FIELDS) {
  test(name, () => {
    const out = translated({ ...BASE, ...body }).body;
    for (const [key, value] of Object.entries(chat)) assert.deepEqual(out[key], value, key);
  });
}

test('what a node cannot use is not sent: store, include, metadata, truncation, text.verbosity, reasoning.summary', () => {
  const out = translated({
    ...BASE,
    store: true,
    include: ['reasoning.encrypted_content'],
    metadata: { a: '1' },
    truncation: 'auto',
    text: { format: { type: 'text' }, verbosity: 'low' },
    reasoning: { summary: 'auto' },
    client_metadata: { x: 'y' },
  }).body;
  assert.deepEqual(out, { model: 'coder', messages: [{ role: 'user', content: 'hi' }] });
});

test('without tools no tool_choice or parallel_tool_calls is sent (servers refuse a choice without tools)', () => {
  const out = translated({ ...BASE, tools: [{ type: 'web_search' }], tool_choice: 'auto', parallel_tool_calls: true }).body;
  assert.equal(out['tools'], undefined);
  assert.equal(out['tool_choice'], undefined);
  assert.equal(out['parallel_tool_calls'], undefined);
});

test('the stream flag follows the client: a plain request is not a stream', () => {
  const plain = translated(BASE);
  assert.equal(plain.stream, false);
  assert.equal(plain.body['stream'], undefined);
  assert.equal(translated({ ...BASE, stream: true }).stream, true);
});

const REFUSED: readonly { body: JsonObject; field: string }[] = [
  { body: { previous_response_id: 'resp_1' }, field: 'previous_response_id' },
  { body: { conversation: 'conv_1' }, field: 'conversation' },
  { body: { prompt: { id: 'pmpt_1' } }, field: 'prompt' },
  { body: { background: true }, field: 'background' },
  { body: { text: { format: { type: 'grammar' } } }, field: 'text.format.type' },
  { body: { tools: [{ type: 'shell' }] }, field: 'tools[0].type' },
  { body: { input: [{ type: 'item_reference', id: 'x' }] }, field: 'input[0].type' },
];

for (const { body, field } of REFUSED) {
  test(`refuses ${field} with a message saying why`, () => {
    const result = chatRequest({ ...BASE, ...body }, CONTEXT);
    assert.equal(result.kind, 'untranslatable');
    assert.equal(result.kind === 'untranslatable' && result.field, field);
    assert.ok(result.kind === 'untranslatable' && result.message.length > 20);
  });
}

test('a null previous_response_id is no previous response', () => {
  assert.equal(chatRequest({ ...BASE, previous_response_id: null }, CONTEXT).kind, 'translated');
});

// Codex 0.171's turns as it sends them (`codex exec`, unknown model: no instructions field, the
// prompt in developer messages, store false, web_search and a namespace among the tools).
const CODEX_TOOLS = [
  {
    type: 'function',
    name: 'exec_command',
    description: 'Runs a command in a PTY.',
    strict: false,
    parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'], additionalProperties: false },
  },
  {
    type: 'namespace',
    name: 'multi_agent_v1',
    description: 'Sub-agents.',
    tools: [
      {
        type: 'function',
        name: 'close_agent',
        description: 'Close an agent.',
        strict: false,
        parameters: {
          type: 'object',
          properties: { target: { type: 'string' } },
          required: ['target'],
          additionalProperties: false,
        },
      },
    ],
  },
  { type: 'web_search', external_web_access: false },
];
const CODEX_TURN = {
  model: 'coder',
  stream: true,
  input: [
    {
      type: 'message',
      id: 'msg_a',
      role: 'developer',
      content: [{ type: 'input_text', text: 'You are a coding agent running in the Codex CLI.' }],
    },
    {
      type: 'message',
      id: 'msg_b',
      role: 'developer',
      content: [{ type: 'input_text', text: '<skills_instructions>…</skills_instructions>' }],
    },
    {
      type: 'message',
      id: 'msg_c',
      role: 'user',
      content: [{ type: 'input_text', text: '<environment_context>\n  <cwd>/w</cwd>\n</environment_context>' }],
    },
    { type: 'message', id: 'msg_d', role: 'user', content: [{ type: 'input_text', text: 'list the files here' }] },
  ],
  tools: CODEX_TOOLS,
  tool_choice: 'auto',
  parallel_tool_calls: true,
  reasoning: { summary: 'auto' },
  store: false,
  include: ['reasoning.encrypted_content'],
  prompt_cache_key: '01a251e2-a6d4-77e1-9507-81689d225381',
  client_metadata: { session_id: '01a251e2-a6d4-77e1-9507-81689d225381' },
};

test("Codex's first turn: one system prompt, its user turns, its functions (namespace flattened, web_search dropped), usage asked", () => {
  const { body, stream, memo } = translated(CODEX_TURN);
  assert.equal(stream, true);
  assert.deepEqual(body, {
    model: 'coder',
    messages: [
      {
        role: 'system',
        content: 'You are a coding agent running in the Codex CLI.\n\n<skills_instructions>…</skills_instructions>',
      },
      { role: 'user', content: '<environment_context>\n  <cwd>/w</cwd>\n</environment_context>' },
      { role: 'user', content: 'list the files here' },
    ],
    tools: [
      {
        type: 'function',
        function: {
          name: 'exec_command',
          description: 'Runs a command in a PTY.',
          parameters: CODEX_TOOLS[0]?.['parameters'],
          strict: false,
        },
      },
      {
        type: 'function',
        function: {
          name: 'multi_agent_v1__close_agent',
          description: 'Close an agent.',
          parameters: {
            type: 'object',
            properties: { target: { type: 'string' } },
            required: ['target'],
            additionalProperties: false,
          },
          strict: false,
        },
      },
    ],
    tool_choice: 'auto',
    parallel_tool_calls: true,
    prompt_cache_key: '01a251e2-a6d4-77e1-9507-81689d225381',
    stream: true,
    stream_options: { include_usage: true },
  });
  const { tools, echo } = memo as ResponsesMemo;
  assert.deepEqual(tools['multi_agent_v1__close_agent'], { kind: 'function', name: 'close_agent', namespace: 'multi_agent_v1' });
  assert.equal(echo['store'], false, 'the answer says nothing was stored');
  assert.deepEqual(echo['tools'], CODEX_TOOLS, 'the answer repeats the tools the client asked with');
});

test("Codex's second turn: its function call and the call's output are the assistant's tool_calls and a tool message", () => {
  const { body } = translated({
    ...CODEX_TURN,
    input: [
      ...CODEX_TURN.input,
      {
        type: 'function_call',
        status: 'completed',
        id: 'fc_1',
        name: 'exec_command',
        arguments: '{"cmd":"ls"}',
        call_id: 'call_5abe7d5f',
      },
      {
        type: 'function_call_output',
        id: 'fco_1',
        call_id: 'call_5abe7d5f',
        output: 'Process exited with code 0\nOutput:\nREADME.md\nnotes.txt\n',
      },
    ],
  });
  assert.deepEqual((body['messages'] as JsonObject[]).slice(3), [
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_5abe7d5f', type: 'function', function: { name: 'exec_command', arguments: '{"cmd":"ls"}' } }],
    },
    { role: 'tool', tool_call_id: 'call_5abe7d5f', content: 'Process exited with code 0\nOutput:\nREADME.md\nnotes.txt\n' },
  ]);
});
