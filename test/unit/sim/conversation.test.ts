// The sims read the same conversation out of every API: the tools offered, the tool choice, and
// whether the model answers a user or a tool's result.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  anthropicConversation,
  chatConversation,
  promptConversation,
  responsesConversation,
  type Conversation,
} from '#src/sim/conversation.ts';

const SCHEMA = { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] };

function brief(c: Conversation): unknown {
  return { tools: c.tools.map((t) => t.name), choice: c.choice, turn: c.lastTurn, text: c.lastText, tool: c.lastToolName };
}

test('chat: tools, each tool_choice, and the turn answered', () => {
  const tools = [{ type: 'function', function: { name: 'shell', description: 'runs', parameters: SCHEMA } }];
  const user = [{ role: 'user', content: 'list   the files' }];
  assert.deepEqual(brief(chatConversation({ messages: user, tools })), {
    tools: ['shell'],
    choice: { mode: 'auto' },
    turn: 'user',
    text: 'list the files',
    tool: undefined,
  });
  const choices: [unknown, unknown][] = [
    ['none', { mode: 'none' }],
    ['required', { mode: 'required' }],
    [
      { type: 'function', function: { name: 'shell' } },
      { mode: 'named', name: 'shell' },
    ],
    [42, { mode: 'auto' }],
  ];
  for (const [choice, expected] of choices)
    assert.deepEqual(chatConversation({ messages: user, tools, tool_choice: choice }).choice, expected);
  const afterTool = [
    ...user,
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'shell', arguments: '{}' } }],
    },
    { role: 'tool', tool_call_id: 'c1', content: [{ type: 'text', text: 'a.txt b.txt' }] },
  ];
  assert.deepEqual(brief(chatConversation({ messages: afterTool, tools })), {
    tools: ['shell'],
    choice: { mode: 'auto' },
    turn: 'tool_result',
    text: 'a.txt b.txt',
    tool: 'shell',
  });
  assert.equal(chatConversation({ messages: [{ role: 'assistant', content: 'hi' }] }).lastTurn, 'other');
  // Agents append system/developer messages after the user's turn, and wrap reminders into it.
  const withReminder = [
    {
      role: 'user',
      content: [
        { type: 'text', text: '<system-reminder>\nbe nice\n</system-reminder>' },
        { type: 'text', text: 'hi there' },
      ],
    },
    { role: 'system', content: 'environment' },
    { role: 'developer', content: 'rules' },
  ];
  assert.deepEqual(
    [chatConversation({ messages: withReminder }).lastTurn, chatConversation({ messages: withReminder }).lastText],
    ['user', 'hi there'],
  );
  assert.equal(anthropicConversation({ messages: withReminder }).lastText, 'hi there');
  assert.equal(responsesConversation({ input: withReminder }).lastText, 'hi there');
  assert.deepEqual(chatConversation({ messages: 'nope', tools: 'nope' }).tools, []);
});

test('responses: a string input is a user turn; function_call_output answers the call it names', () => {
  const tools = [{ type: 'function', name: 'shell', parameters: SCHEMA }, { type: 'web_search' }];
  assert.deepEqual(brief(responsesConversation({ input: 'hello', tools, tool_choice: { type: 'function', name: 'shell' } })), {
    tools: ['shell'],
    choice: { mode: 'named', name: 'shell' },
    turn: 'user',
    text: 'hello',
    tool: undefined,
  });
  const input = [
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'list files' }] },
    { type: 'function_call', call_id: 'c9', name: 'shell', arguments: '{}' },
    { type: 'function_call_output', call_id: 'c9', output: 'README.md' },
  ];
  assert.deepEqual(brief(responsesConversation({ input, tools })), {
    tools: ['shell'],
    choice: { mode: 'auto' },
    turn: 'tool_result',
    text: 'README.md',
    tool: 'shell',
  });
  assert.equal(responsesConversation({ input: input.slice(0, 1) }).lastText, 'list files');
});

test('anthropic: tool_choice auto/any/tool/none, and a tool_result block answers the tool_use it names', () => {
  const tools = [{ name: 'Bash', description: 'runs a command', input_schema: SCHEMA }];
  const choices: [unknown, unknown][] = [
    [{ type: 'auto' }, { mode: 'auto' }],
    [{ type: 'any' }, { mode: 'required' }],
    [{ type: 'none' }, { mode: 'none' }],
    [
      { type: 'tool', name: 'Bash' },
      { mode: 'named', name: 'Bash' },
    ],
    [undefined, { mode: 'auto' }],
  ];
  const user = [{ role: 'user', content: [{ type: 'text', text: 'list files' }] }];
  for (const [choice, expected] of choices)
    assert.deepEqual(anthropicConversation({ messages: user, tools, tool_choice: choice }).choice, expected);
  const messages = [
    ...user,
    { role: 'assistant', content: [{ type: 'tool_use', id: 'tu1', name: 'Bash', input: { command: 'ls' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tu1', content: [{ type: 'text', text: 'x.ts' }] }] },
  ];
  assert.deepEqual(brief(anthropicConversation({ messages, tools })), {
    tools: ['Bash'],
    choice: { mode: 'auto' },
    turn: 'tool_result',
    text: 'x.ts',
    tool: 'Bash',
  });
});

test('a completions prompt is a user turn without tools', () => {
  assert.deepEqual(brief(promptConversation(['one', 'two'])), {
    tools: [],
    choice: { mode: 'auto' },
    turn: 'user',
    text: 'one two',
    tool: undefined,
  });
});
