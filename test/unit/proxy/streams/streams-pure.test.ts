// The resumable-streams feature's pure parts (src/proxy/streams/): which marked requests are
// followed and what they teach the one memory of owners; the route query (conv_id, from); the
// lookup body, its split by owner, and a node's answer kept to the ids asked; and the owner memory's
// conversation ids (apart from answers, kept for the node's retention).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GatewayError } from '#src/core/errors.ts';
import { OPEN_CALLER, type Caller } from '#src/proxy/feature/request-feature.ts';
import { followConversation } from '#src/proxy/streams/streams-feature.ts';
import { streamQuery } from '#src/proxy/streams/conversation-routes.ts';
import { byOwner, lookupIds, ownedEntries } from '#src/proxy/streams/stream-lookup.ts';
import { CONVERSATION_RETENTION_MS, conversationOwnerId, ownerTtlMs } from '#src/routing/policies/owned-ids.ts';
import { SessionTable } from '#src/routing/policies/session-table.ts';
import { answerOwner, learnResponse } from '#src/routing/policies/sessions.ts';

const TEAM: Caller = { ...OPEN_CALLER, queue: { name: 'team-a', priority: 'standard', weight: 1 } };
const marked = (over: Partial<Parameters<typeof followConversation>[0]> = {}) => ({
  value: 'conv-1',
  endpoint: '/v1/chat/completions' as const,
  caller: TEAM,
  stream: true,
  rewritten: false,
  ...over,
});

test('a streamed request with the header teaches its node per attempt and at its end; a JSON or rewritten one teaches nothing', () => {
  const learnt: string[] = [];
  const learn = (tenant: string, id: string, node: string): void => void learnt.push(`${tenant} ${JSON.stringify(id)} ${node}`);
  const attempts = followConversation(marked(), learn);
  assert.ok(attempts !== undefined);
  attempts.attempted({ kind: 'node', name: 'n1' });
  attempts.concluded({ kind: 'node', name: 'n1' }, { kind: 'failed' } as never);
  attempts.attempted({ kind: 'site', id: 's' });
  attempts.attempted({ kind: 'node', name: 'n2' });
  assert.deepEqual(learnt, [
    'team-a "conversation\\nconv-1" n1',
    'team-a "conversation\\nconv-1" n1',
    'team-a "conversation\\nconv-1" n2',
  ]);
  assert.equal(followConversation(marked({ stream: false }), learn), undefined);
  assert.equal(followConversation(marked({ rewritten: true }), learn), undefined);
});

test('the route query: conv_id required, from a whole number of bytes or absent', () => {
  const q = (search: string) => streamQuery(new URL(`http://x/v1/stream${search}`), true);
  assert.deepEqual(q('?conv_id=a%2Fb%3A%3Am&from=12'), { id: 'a/b::m', from: '12' });
  assert.deepEqual(q('?conv_id=c'), { id: 'c', from: undefined });
  assert.deepEqual(q('?conv_id=c&from='), { id: 'c', from: undefined });
  for (const bad of ['', '?from=1', '?conv_id=', '?conv_id=c&from=-1', '?conv_id=c&from=1.5', '?conv_id=c&from=12x']) {
    const answer = q(bad);
    assert.ok(answer instanceof GatewayError, bad);
    assert.equal(answer.status, 400);
  }
});

test('a lookup body: its ids once each, non-strings ignored; not JSON, no array or over 256 ids is 400', () => {
  assert.deepEqual(lookupIds(Buffer.from('{"conversation_ids":["a","",7,"b","a"]}')), ['a', 'b']);
  for (const body of [
    'nope',
    '{}',
    '{"conversation_ids":"a"}',
    JSON.stringify({ conversation_ids: [...Array(257).keys()].map(String) }),
  ]) {
    const answer = lookupIds(Buffer.from(body));
    assert.ok(answer instanceof GatewayError, body.slice(0, 40));
  }
});

test("ids are split by owner in the order of each owner's first id; a node's entries are kept to the ids asked", () => {
  const split = byOwner(['a', 'b', 'c', 'd'], ['n2', undefined, 'n1', 'n2']);
  assert.deepEqual(
    [...split],
    [
      ['n2', ['a', 'd']],
      ['n1', ['c']],
    ],
  );
  const entries = ownedEntries(
    JSON.stringify([{ conversation_id: 'a' }, { conversation_id: 'a::m' }, { conversation_id: 'zz' }, 'x']),
    new Set(['a']),
  );
  assert.deepEqual(entries, [{ conversation_id: 'a' }]);
  assert.equal(ownedEntries('{}', new Set()), 'its answer is not an array');
  assert.equal(ownedEntries('<html>', new Set()), 'its answer is not JSON');
});

test("the owner memory keeps a conversation for the node's retention, per tenant, apart from an answer id of the same text", () => {
  assert.equal(ownerTtlMs(conversationOwnerId('x'), 1_800_000), CONVERSATION_RETENTION_MS);
  assert.equal(ownerTtlMs('chatcmpl-x', 1_800_000), 1_800_000);
  const context = { sessions: new SessionTable(), sessionTtlMs: () => 3_600_000 };
  learnResponse(context, 'team-a', conversationOwnerId('x'), 'n1', 0);
  learnResponse(context, 'team-a', 'x', 'n2', 0);
  assert.equal(answerOwner(context, 'team-a', conversationOwnerId('x'), CONVERSATION_RETENTION_MS), 'n1');
  assert.equal(answerOwner(context, 'team-b', conversationOwnerId('x'), 1), undefined, "another tenant's");
  assert.equal(
    answerOwner(context, 'team-a', conversationOwnerId('x'), CONVERSATION_RETENTION_MS + 1),
    undefined,
    'past retention',
  );
  assert.equal(answerOwner(context, 'team-a', 'x', CONVERSATION_RETENTION_MS + 1), 'n2', 'the answer id lives the session TTL');
});

test('[cluster]: a conversation is shared with its own TTL, and an owner not held is read from the share', async () => {
  const puts: [number, string, number][] = [];
  const store = new Map<number, string>();
  const share = {
    put: (key: number, target: string, ttl: number) => {
      puts.push([key, target, ttl]);
      store.set(key, target);
    },
    get: async (key: number) => store.get(key),
  };
  const writer = { sessions: new SessionTable(), sessionTtlMs: () => 3_600_000 };
  writer.sessions.share(share, () => 3_600_000);
  learnResponse(writer, 'team-a', conversationOwnerId('x'), 'n1', 0);
  assert.equal(puts[0]?.[2], CONVERSATION_RETENTION_MS);
  const reader = { sessions: new SessionTable(), sessionTtlMs: () => 3_600_000 };
  reader.sessions.share(share, () => 3_600_000);
  assert.equal(await answerOwner(reader, 'team-a', conversationOwnerId('x'), 10), 'n1');
  assert.equal(await answerOwner(reader, 'team-b', conversationOwnerId('x'), 10), undefined);
});
