// Prompt sizing of Anthropic Messages bodies: system + messages (every text-bearing block) + tools
// count as the prompt, so the context guard and the leases see what the server will render.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  promptText,
  upperBoundTokens,
  TEMPLATE_TOKENS_PER_MESSAGE,
  TEMPLATE_TOKENS_PER_PROMPT,
} from '#src/proxy/request/prompt-size.ts';

const TOOLS = [
  { name: 'read_file', description: 'Read a file', input_schema: { type: 'object', properties: { path: { type: 'string' } } } },
];

test('the pieces and messages of each body shape', () => {
  const rows: readonly (readonly [string, Record<string, unknown>, readonly string[], number])[] = [
    [
      'a string system and a string message',
      { system: 'be brief', messages: [{ role: 'user', content: 'hi' }] },
      ['be brief', 'hi'],
      2,
    ],
    [
      'system as text blocks',
      {
        system: [
          { type: 'text', text: 'one' },
          { type: 'text', text: 'two', cache_control: { type: 'ephemeral' } },
        ],
        messages: [],
      },
      ['one', 'two'],
      1,
    ],
    [
      'no system',
      {
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'a' },
              { type: 'image', source: { type: 'base64', data: 'AAAA' } },
            ],
          },
        ],
      },
      ['a'],
      1,
    ],
    [
      'a tool call and its result',
      {
        messages: [
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 'hmm', signature: 's' },
              { type: 'tool_use', id: 't1', name: 'read_file', input: { path: '/x' } },
            ],
          },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'file body' }] }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't2', content: 'plain result' }] },
        ],
      },
      ['hmm', 'read_file', '{"path":"/x"}', 'file body', 'plain result'],
      3,
    ],
    ['tools count as JSON', { messages: [{ role: 'user', content: 'x' }], tools: TOOLS }, ['x', JSON.stringify(TOOLS)], 1],
  ];
  for (const [what, body, pieces, messages] of rows) {
    for (const endpoint of ['/v1/messages', '/v1/messages/count_tokens']) {
      const text = promptText(endpoint, body);
      assert.deepEqual(text.pieces, pieces, `${what} (${endpoint})`);
      assert.equal(text.messages, messages, `${what} (${endpoint})`);
    }
  }
});

test('the upper bound covers every byte plus the template allowance', () => {
  const body = { system: 'sys', messages: [{ role: 'user', content: 'héllo' }], tools: TOOLS };
  const bytes = 3 + Buffer.byteLength('héllo') + Buffer.byteLength(JSON.stringify(TOOLS));
  assert.equal(
    upperBoundTokens(promptText('/v1/messages', body)),
    bytes + TEMPLATE_TOKENS_PER_PROMPT + 2 * TEMPLATE_TOKENS_PER_MESSAGE,
  );
});
