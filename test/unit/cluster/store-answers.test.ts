// The store's answers read at the port (store-answers.ts): each decoder takes its script's shape
// and nothing else; anything else throws a StoreAnswerError naming the answer, the call and what
// was expected (the caller then treats the store as lost).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  acquireAnswer,
  constantAnswer,
  fieldsAnswer,
  holdsAnswer,
  flagAnswer,
  liveReplicasAnswer,
  MAX_LIVE_REPLICAS,
  renewAnswer,
  scriptShaAnswer,
  setNxAnswer,
  shownAnswer,
  StoreAnswerError,
  switchTakeAnswer,
  tenantAdmitAnswer,
  tenantPeekAnswer,
  usageReadAnswer,
} from '#src/cluster/store-answers.ts';

const NONSENSE: readonly unknown[] = [
  'abc',
  '',
  '1',
  null,
  undefined,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  -1,
  1.5,
  [],
  ['abc'],
  [1, 2],
  { a: 1 },
  true,
];

function refused(decode: () => unknown, message: RegExp): void {
  assert.throws(decode, (error: unknown) => error instanceof StoreAnswerError && message.test(error.message), String(message));
}

test('acquire: [0|1|2, used, ahead] only', () => {
  const good: [unknown, object][] = [
    [[1, 3, 0], { granted: true, used: 3, ahead: 0 }],
    [[0, 4, 2], { granted: false, used: 4, ahead: 2 }],
    [[2, 1, 0], { granted: false, used: 1, ahead: 0, switching: true }],
  ];
  for (const [raw, expected] of good) assert.deepEqual(acquireAnswer(raw), expected, JSON.stringify(raw));
  for (const raw of [
    ...NONSENSE,
    [3, 0, 0],
    [1, -1, 0],
    [1, 2],
    [1, 2, 0, 0],
    [1, '2', 0],
    ['1', 2, 0],
    [1, 2.5, 0],
    [1, Number.NaN, 0],
  ]) {
    refused(() => acquireAnswer(raw), /^store answered .* to acquire: expected an array of 3 integers/);
  }
  refused(() => acquireAnswer('abc'), /^store answered "abc" to acquire: expected /);
});

test('flags, constants and counts', () => {
  assert.equal(flagAnswer(1, 'release'), true);
  assert.equal(flagAnswer(0, 'release'), false);
  for (const raw of [...NONSENSE, 2]) refused(() => flagAnswer(raw, 'release'), /to release: expected the integer 0 or 1$/);
  assert.doesNotThrow(() => constantAnswer(1, 'tenant renew', 1));
  for (const raw of [...NONSENSE, 0, 2])
    refused(() => constantAnswer(raw, 'tenant renew', 1), /to tenant renew: expected the integer 1$/);
  assert.doesNotThrow(() => renewAnswer(3, 3));
  for (const raw of [...NONSENSE, 2, 4])
    refused(() => renewAnswer(raw, 3), /to renew: expected the integer 3 \(the leases sent\)$/);
  assert.equal(liveReplicasAnswer(1), 1);
  assert.equal(liveReplicasAnswer(MAX_LIVE_REPLICAS), MAX_LIVE_REPLICAS);
  for (const raw of [...NONSENSE, 0, MAX_LIVE_REPLICAS + 1, 2 ** 53])
    refused(() => liveReplicasAnswer(raw), /to heartbeat: expected an integer count of live replicas/);
});

const DAYS = { days: ['2026-12-06', '2026-12-07', '2026-12-08'] as const, startMs: 1_796_601_600_000, graceMs: 3_600_000 };

test('tenant reserve: 7 fields, figures as Lua strings, the day 1..3, the store clock', () => {
  assert.deepEqual(tenantAdmitAnswer([1, 2, '3.5', '120', '900', 2, 1_796_650_000_000], DAYS), {
    admitted: true,
    inFlight: 2,
    requestsUsed: 3.5,
    tokensUsed: 120,
    todayTokens: 900,
    day: '2026-12-07',
    storeNowMs: 1_796_650_000_000,
  });
  assert.equal(tenantAdmitAnswer([0, 0, '0', '1e+15', '0', 3, 1], DAYS).day, '2026-12-08');
  assert.equal(tenantAdmitAnswer([0, 0, '0', '0', '0', 1, 1], DAYS).tokensUsed, 0);
  const bad: unknown[] = [
    ...NONSENSE,
    [1, 2, '3', '4', '5', 2],
    [1, 2, '3', '4', '5', 0, 1],
    [1, 2, '3', '4', '5', 4, 1],
    [1, 2, 'abc', '4', '5', 2, 1],
    [1, 2, '3', 'nan', '5', 2, 1],
    [1, 2, '3', 'inf', '5', 2, 1],
    [1, 2, '-3', '4', '5', 2, 1],
    [1, 2, '3', '4', '5', 2, 0],
    [2, 2, '3', '4', '5', 2, 1],
    [1, -2, '3', '4', '5', 2, 1],
  ];
  for (const raw of bad) refused(() => tenantAdmitAnswer(raw, DAYS), /to tenant reserve: expected an array of 7/);
});

test('usage read: [now, flat pairs]; a part not of the written shape is skipped, a wrong frame refused', () => {
  assert.deepEqual(usageReadAnswer(['1000', ['r1', '400 {"a":1}', 'r2', 'garbled', 'r3', '900 {}']]), [
    { replica: 'r1', ageMs: 600, body: '{"a":1}' },
    { replica: 'r3', ageMs: 100, body: '{}' },
  ]);
  assert.deepEqual(usageReadAnswer(['1000', []]), []);
  for (const raw of [...NONSENSE, ['abc', []], ['1000'], ['1000', ['r1']], ['1000', 'abc'], ['1000', ['r1', 5]]])
    refused(() => usageReadAnswer(raw), /to usage read: expected/);
});

test('tenant peek: numbers or nil in their places', () => {
  assert.deepEqual(tenantPeekAnswer(['5000', 1, '2.5', '4000', null, null, '77']), {
    nowMs: 5000,
    inFlight: 1,
    requests: { used: 2.5, atMs: 4000 },
    tokens: undefined,
    dayTokens: 77,
  });
  assert.deepEqual(tenantPeekAnswer(['5000', 0, null, null, null, null, null]), {
    nowMs: 5000,
    inFlight: 0,
    requests: undefined,
    tokens: undefined,
    dayTokens: 0,
  });
  for (const raw of [
    ...NONSENSE,
    ['5000', 0, null, null, null, null],
    ['abc', 0, null, null, null, null, null],
    ['5000', 'abc', null, null, null, null, null],
    ['5000', 0, 'abc', '1', null, null, null],
    ['5000', 0, null, null, null, null, 'x'],
  ]) {
    refused(() => tenantPeekAnswer(raw), /to tenant peek: expected/);
  }
});

test('switch take, claim fields, SET NX and SCRIPT LOAD', () => {
  assert.deepEqual(switchTakeAnswer([1], 8), { code: 1 });
  assert.deepEqual(switchTakeAnswer([0, 'h', 'r', 'm', 'load', 'request', '0', null, null], 8), {
    code: 0,
    fields: ['h', 'r', 'm', 'load', 'request', '0', null, null],
  });
  assert.deepEqual(switchTakeAnswer([2, 'r2/x/1'], 8), { code: 2, ids: ['r2/x/1'] });
  for (const raw of [...NONSENSE, [1, 'x'], [0, 'h'], [2], [2, 5], [3]])
    refused(() => switchTakeAnswer(raw, 8), /to switch take: expected/);
  assert.deepEqual(fieldsAnswer(['a', null], 'switch peek', 2), ['a', null]);
  for (const raw of [...NONSENSE, ['a'], ['a', 1]])
    refused(() => fieldsAnswer(raw, 'switch peek', 2), /to switch peek: expected an array of 2 strings or nils$/);
  assert.equal(setNxAnswer('OK', 'wake claim'), true);
  assert.equal(setNxAnswer(null, 'wake claim'), false);
  for (const raw of ['abc', 'ok', 1, undefined, []])
    refused(() => setNxAnswer(raw, 'wake claim'), /to wake claim: expected "OK" or nil$/);
  const sha = 'a'.repeat(40);
  assert.equal(scriptShaAnswer(sha, 'acquire'), sha);
  for (const raw of ['abc', 'g'.repeat(40), 'a'.repeat(39), 1, null])
    refused(() => scriptShaAnswer(raw, 'acquire'), /to SCRIPT LOAD of acquire: expected a SHA1 of 40 hex digits$/);
});

test('a reason shows the answer bounded, control characters escaped', () => {
  assert.equal(shownAnswer('abc'), '"abc"');
  assert.equal(shownAnswer(Number.NaN), 'NaN');
  assert.equal(shownAnswer(undefined), 'nothing');
  assert.equal(shownAnswer(null), 'null');
  assert.equal(shownAnswer(['a\u0000\n', 1]), '["a\\u0000\\n",1]');
  const long = shownAnswer('x'.repeat(500));
  assert.ok(long.length <= 81 && long.endsWith('…'), long);
});

test('holds list: [hold JSON, ms left] pairs only; a value another writer made nonsense of makes the whole answer nonsense', () => {
  const value = (over: Record<string, unknown> = {}): string =>
    JSON.stringify({ node: 'router', model: 'extra', kind: 'loaded', replica: 'r0', for: 600_000, ...over });
  assert.deepEqual(holdsAnswer([value(), 599_000], 10), [
    { node: 'router', model: 'extra', kind: 'loaded', replica: 'r0', forMs: 600_000, leftMs: 599_000 },
  ]);
  assert.deepEqual(holdsAnswer([], 10), []);
  const bad: unknown[] = [
    ...NONSENSE.filter((v) => !(Array.isArray(v) && v.length === 0)),
    [value()],
    [value(), 0],
    [value(), -1],
    [value(), '5'],
    [value(), 1.5],
    ['{', 5],
    [value({ kind: 'held' }), 5],
    [value({ node: 1 }), 5],
    [value({ replica: null }), 5],
    [value({ for: 0 }), 5],
    [value({ for: 'x' }), 5],
    [JSON.stringify(null), 5],
    [value(), 5, value(), 5],
  ];
  for (const raw of bad)
    refused(() => holdsAnswer(raw, 1), /^store answered .* to holds list: expected an array of at most 1 pairs/);
});
