// Responses `instructions` + `input` → chat `messages`: each input item in its chat place, and the
// items a chat node cannot carry refused by their key path.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chatMessages } from '#src/translate/responses/input-messages.ts';

const CASES: readonly { name: string; instructions?: unknown; input: unknown; messages: unknown[] }[] = [
  {
    name: 'a string input is one user message, instructions the system message before it',
    instructions: 'be brief',
    input: 'hello',
    messages: [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'hello' },
    ],
  },
  {
    name: 'instructions and the developer and system messages that open the input become one system message',
    instructions: 'base',
    input: [
      { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'dev one' }] },
      { role: 'system', content: 'sys two' },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] },
    ],
    messages: [
      { role: 'system', content: 'base\n\ndev one\n\nsys two' },
      { role: 'user', content: 'hi' },
    ],
  },
  {
    name: 'a developer message after the conversation started stays a system message in its place',
    input: [
      { role: 'user', content: 'hi' },
      { role: 'developer', content: 'now be terse' },
      { role: 'user', content: 'again' },
    ],
    messages: [
      { role: 'user', content: 'hi' },
      { role: 'system', content: 'now be terse' },
      { role: 'user', content: 'again' },
    ],
  },
  {
    name: 'text parts join into one string; an image keeps the parts, with its detail',
    input: [
      {
        role: 'user',
        content: [
          { type: 'input_text', text: 'what is' },
          { type: 'input_image', image_url: 'data:image/png;base64,AAAA', detail: 'low' },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'input_text', text: 'a' },
          { type: 'input_text', text: 'b' },
        ],
      },
    ],
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'what is' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA', detail: 'low' } },
        ],
      },
      { role: 'user', content: 'a\nb' },
    ],
  },
  {
    name: 'a function call round trip: the assistant message with tool_calls, then the tool message',
    input: [
      { role: 'user', content: 'list the files' },
      {
        type: 'function_call',
        id: 'fc_1',
        call_id: 'call_1',
        name: 'exec_command',
        arguments: '{"cmd":"ls"}',
        status: 'completed',
      },
      { type: 'function_call_output', call_id: 'call_1', output: 'README.md\nnotes.txt\n' },
    ],
    messages: [
      { role: 'user', content: 'list the files' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'exec_command', arguments: '{"cmd":"ls"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'README.md\nnotes.txt\n' },
    ],
  },
  {
    name: 'one assistant turn (reasoning, words, two calls) is one assistant message; its reasoning rides as reasoning_content',
    input: [
      { role: 'user', content: 'go' },
      { type: 'reasoning', id: 'rs_1', summary: [], content: [{ type: 'reasoning_text', text: 'I should look' }] },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Looking.' }] },
      { type: 'function_call', call_id: 'a', name: 'ls', arguments: '{}' },
      { type: 'function_call', call_id: 'b', name: 'pwd', arguments: '{}' },
      { type: 'function_call_output', call_id: 'a', output: 'x' },
      { type: 'function_call_output', call_id: 'b', output: 'y' },
    ],
    messages: [
      { role: 'user', content: 'go' },
      {
        role: 'assistant',
        content: 'Looking.',
        tool_calls: [
          { id: 'a', type: 'function', function: { name: 'ls', arguments: '{}' } },
          { id: 'b', type: 'function', function: { name: 'pwd', arguments: '{}' } },
        ],
        reasoning_content: 'I should look',
      },
      { role: 'tool', tool_call_id: 'a', content: 'x' },
      { role: 'tool', tool_call_id: 'b', content: 'y' },
    ],
  },
  {
    name: 'a reasoning summary is carried when there is no reasoning text; encrypted-only reasoning is dropped',
    input: [
      { role: 'user', content: 'q' },
      { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'thought briefly' }] },
      { role: 'assistant', content: [{ type: 'output_text', text: 'A1' }] },
      { role: 'user', content: 'q2' },
      { type: 'reasoning', id: 'rs_2', summary: [], encrypted_content: 'gAAAA…' },
      { role: 'assistant', content: [{ type: 'output_text', text: 'A2' }] },
    ],
    messages: [
      { role: 'user', content: 'q' },
      { role: 'assistant', content: 'A1', reasoning_content: 'thought briefly' },
      { role: 'user', content: 'q2' },
      { role: 'assistant', content: 'A2' },
    ],
  },
  {
    name: 'a namespaced call is named <namespace>__<name>; a custom tool call carries its input as {"input": …}',
    input: [
      { role: 'user', content: 'go' },
      { type: 'function_call', call_id: 'a', namespace: 'multi_agent_v1', name: 'spawn_agent', arguments: '{"task":"t"}' },
      { type: 'custom_tool_call', call_id: 'b', name: 'apply_patch', input: '*** Begin Patch' },
      { type: 'function_call_output', call_id: 'a', output: 'ok' },
      { type: 'custom_tool_call_output', call_id: 'b', output: 'Done!' },
    ],
    messages: [
      { role: 'user', content: 'go' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'a', type: 'function', function: { name: 'multi_agent_v1__spawn_agent', arguments: '{"task":"t"}' } },
          { id: 'b', type: 'function', function: { name: 'apply_patch', arguments: '{"input":"*** Begin Patch"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'a', content: 'ok' },
      { role: 'tool', tool_call_id: 'b', content: 'Done!' },
    ],
  },
  {
    name: "a tool output's text parts join; its images follow the tool messages as a user message",
    input: [
      { role: 'user', content: 'look' },
      { type: 'function_call', call_id: 'a', name: 'view_image', arguments: '{"path":"x.png"}' },
      {
        type: 'function_call_output',
        call_id: 'a',
        output: [
          { type: 'input_text', text: 'the image:' },
          { type: 'input_image', image_url: 'data:image/png;base64,BBBB' },
        ],
      },
      { role: 'assistant', content: 'I see it.' },
    ],
    messages: [
      { role: 'user', content: 'look' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'a', type: 'function', function: { name: 'view_image', arguments: '{"path":"x.png"}' } }],
      },
      { role: 'tool', tool_call_id: 'a', content: 'the image:' },
      { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,BBBB' } }] },
      { role: 'assistant', content: 'I see it.' },
    ],
  },
  {
    name: 'a web_search_call record is dropped (the node searched nothing)',
    input: [
      { role: 'user', content: 'q' },
      { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'q' } },
      { role: 'assistant', content: 'A' },
    ],
    messages: [
      { role: 'user', content: 'q' },
      { role: 'assistant', content: 'A' },
    ],
  },
];

for (const { name, instructions, input, messages } of CASES) {
  test(name, () => {
    assert.deepEqual(chatMessages(instructions, input), messages);
  });
}

const REFUSED: readonly { name: string; input: unknown; field: string }[] = [
  { name: 'an item_reference (a stored item)', input: [{ type: 'item_reference', id: 'msg_1' }], field: 'input[0].type' },
  {
    name: 'an uploaded file',
    input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'f' }] }],
    field: 'input[0].content[0].type',
  },
  {
    name: 'an image by file_id',
    input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'file-1' }] }],
    field: 'input[0].content[0].file_id',
  },
  { name: 'an unknown item type', input: [{ type: 'local_shell_call', call_id: 'a' }], field: 'input[0].type' },
  { name: 'a role chat has no name for', input: [{ role: 'critic', content: 'x' }], field: 'input[0].role' },
  {
    name: 'a function call without call_id',
    input: [{ type: 'function_call', name: 'f', arguments: '{}' }],
    field: 'input[0].call_id',
  },
  { name: 'nothing to answer (instructions only)', input: [], field: 'input' },
  { name: 'input of the wrong type', input: 42, field: 'input' },
];

for (const { name, input, field } of REFUSED) {
  test(`refuses ${name}, naming ${field}`, () => {
    const result = chatMessages('sys', input);
    assert.ok(!Array.isArray(result), 'refused');
    assert.equal(result.kind, 'untranslatable');
    assert.equal(result.field, field);
    assert.notEqual(result.message, '');
  });
}
