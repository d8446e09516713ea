// Why a store call failed, in the store's terms (store-reason.ts): its address (no credential) and
// the root cause; the client library's sentences for "not connected" become the connection's last
// error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connectionCause, storeAddress, storeReason, type StoreFailure } from '#src/cluster/store-reason.ts';
import { StoreAnswerError } from '#src/cluster/store-answers.ts';

const URL_ = 'redis://127.0.0.1:16379/0';
const base: StoreFailure = {
  url: URL_,
  error: undefined,
  connected: true,
  lastCause: undefined,
  timeoutMs: 400,
  password: undefined,
};

function named(name: string, message: string, code?: string): Error {
  const error = new Error(message);
  Object.defineProperty(error, 'name', { value: name });
  if (code !== undefined) Object.assign(error, { code });
  return error;
}

const refused = named('Error', 'connect ECONNREFUSED 127.0.0.1:16379', 'ECONNREFUSED');

test('storeReason: the address and the root cause', () => {
  const cases: [Partial<StoreFailure>, string][] = [
    // Offline: the library's sentence is replaced by the connection's last error.
    [
      {
        error: new Error("Stream isn't writeable and enableOfflineQueue options is false"),
        connected: false,
        lastCause: connectionCause(refused),
      },
      `${URL_}: connect ECONNREFUSED 127.0.0.1:16379`,
    ],
    [
      { error: new Error('Connection is closed.'), connected: false, lastCause: 'the store closed the connection' },
      `${URL_}: the store closed the connection`,
    ],
    [
      {
        error: named('MaxRetriesPerRequestError', 'Reached the max retries per request limit (which is 0).'),
        connected: false,
        lastCause: 'read ECONNRESET',
      },
      `${URL_}: read ECONNRESET`,
    ],
    [
      { error: new Error("Stream isn't writeable and enableOfflineQueue options is false"), connected: false },
      `${URL_}: not connected (connecting again)`,
    ],
    // A system error names its own address and code.
    [{ error: refused, connected: false }, `${URL_}: connect ECONNREFUSED 127.0.0.1:16379`],
    [{ error: new Error('Command timed out') }, `${URL_}: no answer within 400 ms`],
    [
      { error: named('ReplyError', 'WRONGPASS invalid username-password pair or user is disabled.') },
      `${URL_}: store error: WRONGPASS invalid username-password pair or user is disabled.`,
    ],
    [
      { error: named('ParserError', 'Protocol error, got "x" as reply type byte. Please report this.') },
      `${URL_}: answered bytes that are not the Redis protocol (RESP)`,
    ],
    [
      { error: new StoreAnswerError('store answered "abc" to acquire: expected an array of 3 integers') },
      `${URL_}: store answered "abc" to acquire: expected an array of 3 integers`,
    ],
    [{ error: 'odd' }, `${URL_}: odd`],
    // One printable line, bounded.
    [{ error: new Error('a\nb\u0007c') }, `${URL_}: a b c`],
  ];
  for (const [over, expected] of cases) assert.equal(storeReason({ ...base, ...over }), expected, JSON.stringify(over));
  assert.ok(storeReason({ ...base, error: new Error('x'.repeat(1000)) }).length <= 301);
});

test("no credential in a reason: the URL's are dropped, the password scrubbed wherever it appears", () => {
  assert.equal(storeAddress('redis://user:s3cret@10.0.0.9:6379/0'), 'redis://10.0.0.9:6379/0');
  assert.equal(storeAddress('rediss://:s3cret@store.example:6380/1'), 'rediss://store.example:6380/1');
  assert.equal(storeAddress('not a url'), 'the store (its URL does not parse)');
  const reason = storeReason({
    ...base,
    url: 'redis://:s3cret@10.0.0.9:6379/0',
    password: 's3cret',
    error: named('ReplyError', 'ERR bad s3cret'),
  });
  assert.equal(reason, 'redis://10.0.0.9:6379/0: store error: ERR bad ***');
});
