// src/core/undici-parts.ts loads Pool, Agent and errors from their own modules; they must be the
// very objects undici's index exports, so that `instanceof` holds against what either one throws.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as undici from 'undici';
import { Agent, errors, Pool } from '#src/core/undici-parts.ts';

test('Pool, Agent and errors are the objects undici’s index exports', () => {
  assert.equal(Pool, undici.Pool);
  assert.equal(Agent, undici.Agent);
  assert.equal(errors, undici.errors);
  assert.equal(errors.RequestAbortedError, undici.errors.RequestAbortedError);
  assert.equal(errors.ConnectTimeoutError, undici.errors.ConnectTimeoutError);
});

test('an error a Pool from the parts throws is an instance of the index’s class, and the other way round', () => {
  assert.throws(() => new Pool('ftp://127.0.0.1:1'), undici.errors.InvalidArgumentError);
  assert.throws(() => new undici.Pool('ftp://127.0.0.1:1'), errors.InvalidArgumentError);
  assert.ok(new errors.RequestAbortedError() instanceof undici.errors.UndiciError);
});

test('a Pool and an Agent from the parts are undici Dispatchers', async () => {
  const pool = new Pool('http://127.0.0.1:1');
  const agent = new Agent({ connections: 1 });
  try {
    assert.ok(pool instanceof undici.Dispatcher);
    assert.ok(agent instanceof undici.Dispatcher);
  } finally {
    await Promise.all([pool.close(), agent.close()]);
  }
});
