// What a policy may read of one request (src/proxy/request/affinity-key.ts): the session key, read
// from what agents and SDKs already send in a fixed order (the first present, non-empty one wins:
// docs/routing.md, "Sessions"), and the affinity key and prompt prefix.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { IncomingHttpHeaders } from 'node:http';
import {
  affinityKeyOf,
  MAX_SESSION_VALUE_CHARS,
  previousResponseOf,
  promptPrefixOf,
  sessionKeyOf,
} from '#src/proxy/request/affinity-key.ts';

const ALL_HEADERS: IncomingHttpHeaders = {
  'x-claude-code-session-id': 'cc',
  'session-id': 'codex',
  session_id: 'codex-old',
  'x-session-affinity': 'opencode',
  'x-session-id': 'configured',
};
const ALL_BODY = { prompt_cache_key: 'pck', metadata: { user_id: 'meta' }, user: 'user', safety_identifier: 'safe' };

test('the session key: each source in order, the first present and non-empty one wins', () => {
  const order: [string, string][] = [
    ['x-claude-code-session-id', 'cc'],
    ['session-id', 'codex'],
    ['session_id', 'codex-old'],
    ['prompt_cache_key', 'pck'],
    ['x-session-affinity', 'opencode'],
    ['header x-session-id', 'configured'],
    ['metadata.user_id', 'meta'],
    ['user', 'user'],
    ['safety_identifier', 'safe'],
  ];
  const headers: Record<string, string | undefined> = { ...(ALL_HEADERS as Record<string, string>) };
  const body: Record<string, unknown> = { ...ALL_BODY };
  for (const [source, value] of order) {
    assert.deepEqual(sessionKeyOf(headers, body, 'x-session-id'), { source, value }, source);
    // Take that source away (empty for a header: an empty value counts as absent), and the next one wins.
    const header = source.startsWith('header ') ? source.slice(7) : source;
    if (header in headers) headers[header] = '';
    else if (source === 'metadata.user_id') body.metadata = { user_id: '' };
    else body[source] = '';
  }
  assert.equal(sessionKeyOf(headers, body, 'x-session-id'), undefined, 'a plain request names no session');
  assert.equal(sessionKeyOf({}, { messages: [{ role: 'user', content: 'hi' }] }, 'x-session-id'), undefined);
});

test('a configured header, a repeated header, a non-string field, an overlong value', () => {
  assert.deepEqual(sessionKeyOf({ 'x-team-session': 't1' }, {}, 'x-team-session'), {
    source: 'header x-team-session',
    value: 't1',
  });
  assert.deepEqual(sessionKeyOf({ 'session-id': ['a', 'b'] as unknown as string }, {}, 'x-session-id')?.value, 'a');
  assert.equal(sessionKeyOf({}, { user: 42, metadata: 'x', prompt_cache_key: null }, 'x-session-id'), undefined);
  assert.equal(sessionKeyOf({}, { user: 'u'.repeat(2000) }, 'x-session-id')?.value.length, MAX_SESSION_VALUE_CHARS);
  assert.equal(previousResponseOf({ previous_response_id: 'resp_1' }), 'resp_1');
  assert.equal(previousResponseOf({ previous_response_id: 7 }), undefined);
});

test('the affinity policy keys on the same session sources, then the prompt prefix', () => {
  const settings = { affinityHeader: 'x-session-id', affinityPrefixChars: 8 };
  const chat = '/v1/chat/completions';
  const messages = [{ role: 'user', content: 'hello world' }];
  assert.equal(affinityKeyOf({ 'x-claude-code-session-id': 'cc' }, chat, { messages }, settings), 'x-claude-code-session-id:cc');
  assert.equal(affinityKeyOf({ 'x-session-id': 'abc' }, chat, { user: 'u', messages }, settings), 'header:abc');
  assert.equal(affinityKeyOf({}, chat, { user: 'u', messages }, settings), 'user:u');
  assert.equal(affinityKeyOf({}, chat, { messages }, settings), 'prefix:hello wo');
});

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
