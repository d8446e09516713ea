import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { deadline } from '#src/core/deadline.ts';

test('a deadline aborts its signal when the time is up, and says so', async () => {
  const bound = deadline(5);
  await sleep(30);
  assert.equal(bound.signal.aborted, true);
  assert.equal(bound.timedOut, true);
  assert.equal((bound.signal.reason as DOMException).name, 'TimeoutError');
  bound.done();
});

test('the outer signal aborts it too, with its reason, and that is not a timeout', () => {
  const outer = new AbortController();
  const bound = deadline(60_000, outer.signal);
  outer.abort(new Error('node removed'));
  assert.equal(bound.signal.aborted, true);
  assert.equal(bound.timedOut, false);
  assert.equal((bound.signal.reason as Error).message, 'node removed');
  bound.done();
});

test('an outer signal already aborted aborts it at once', () => {
  const outer = AbortSignal.abort('gone');
  const bound = deadline(60_000, outer);
  assert.equal(bound.signal.aborted, true);
  assert.equal(bound.signal.reason, 'gone');
  bound.done();
});

test('done() ends it: no timeout afterwards, and the outer signal no longer reaches it', async () => {
  const outer = new AbortController();
  const bound = deadline(5, outer.signal);
  bound.done();
  bound.done();
  await sleep(30);
  outer.abort();
  assert.equal(bound.signal.aborted, false);
  assert.equal(bound.timedOut, false);
});
