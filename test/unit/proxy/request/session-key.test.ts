// The session key is read from what agents and SDKs already send, in a fixed order; the first
// present, non-empty one wins (docs/routing.md, "Sessions").
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { IncomingHttpHeaders } from 'node:http';
import { MAX_SESSION_VALUE_CHARS, previousResponseOf, sessionKeyOf } from '#src/proxy/request/session-key.ts';
import { affinityKeyOf } from '#src/proxy/request/affinity-key.ts';

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
