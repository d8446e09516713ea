import assert from 'node:assert/strict';
import { test } from 'node:test';
import { affinityKeyOf, promptPrefixOf } from '#src/proxy/request/affinity-key.ts';

const SETTINGS = { affinityHeader: 'x-session-id', affinityPrefixChars: 10, cachePromptChars: 12 };
const CHAT = '/v1/chat/completions';

test('the affinity key: the header, else the user field, else the prompt`s first N characters', () => {
  const messages = [
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content: 'hi' },
  ];
  const cases: [string, Record<string, string | string[]>, Record<string, unknown>, string | undefined][] = [
    ['the header wins', { 'x-session-id': 'abc' }, { user: 'u1', messages }, 'header:abc'],
    ['a repeated header: the first value', { 'x-session-id': ['abc', 'def'] }, { messages }, 'header:abc'],
    ['an empty header falls through to user', { 'x-session-id': '' }, { user: 'u1', messages }, 'user:u1'],
    ['the user field', {}, { user: 'u1', messages }, 'user:u1'],
    ['the prompt prefix, cut to N characters', {}, { messages }, 'prefix:You are te'],
    ['nothing to key on', {}, { messages: [] }, undefined],
  ];
  for (const [what, headers, json, key] of cases) assert.equal(affinityKeyOf(headers, CHAT, json, SETTINGS), key, what);
  assert.equal(affinityKeyOf({}, '/v1/completions', { prompt: 'Once upon a time' }, SETTINGS), 'prefix:Once upon ');
});

test('cache-aware matches the prompt text from its start, message by message, up to its bound', () => {
  const messages = [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'hello there' },
  ];
  assert.equal(promptPrefixOf(CHAT, { messages }, SETTINGS.cachePromptChars), 'Be brief.\nhe');
  assert.equal(promptPrefixOf(CHAT, { messages: [] }, 100), undefined);
});
