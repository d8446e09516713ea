// [log] bodies: the prompt's text as prompt sizing reads it, bounded in bytes on a character
// boundary; never another field of the body.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loggedPrompt } from '#src/proxy/request/logged-prompt.ts';

test('the text pieces of each endpoint, joined, and nothing else', () => {
  const table: [string, Record<string, unknown>, string | undefined][] = [
    [
      '/v1/chat/completions',
      {
        model: 'm',
        user: 'u-secret',
        api_key: 'sk-x',
        messages: [
          { role: 'system', content: 'sys' },
          { role: 'user', content: [{ type: 'text', text: 'hi' }] },
        ],
      },
      'sys\nhi',
    ],
    ['/v1/completions', { prompt: 'once upon' }, 'once upon'],
    ['/v1/embeddings', { input: ['a', 'b'] }, 'a\nb'],
    ['/v1/messages', { system: 'be kind', messages: [{ role: 'user', content: 'yo' }] }, 'be kind\nyo'],
    ['/v1/chat/completions', { messages: [] }, undefined],
  ];
  for (const [endpoint, json, want] of table) assert.equal(loggedPrompt(endpoint, json, 1024)?.text, want, endpoint);
});

test('cut at the bound on a character boundary, and marked', () => {
  assert.deepEqual(loggedPrompt('/v1/completions', { prompt: 'abcdef' }, 6), { text: 'abcdef', truncated: false });
  assert.deepEqual(loggedPrompt('/v1/completions', { prompt: 'abcdef' }, 4), { text: 'abcd', truncated: true });
  assert.deepEqual(
    loggedPrompt('/v1/completions', { prompt: 'a€b' }, 3),
    { text: 'a', truncated: true },
    '€ is three bytes: not split',
  );
  assert.deepEqual(loggedPrompt('/v1/completions', { prompt: '😀x' }, 4), { text: '😀', truncated: true });
});
