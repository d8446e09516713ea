import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appended } from '#src/core/appended.ts';

test('appended makes a list of one when there is none, then pushes onto the same list', () => {
  const first = appended(undefined, 'a');
  assert.deepEqual(first, ['a']);
  const second = appended(first, 'b');
  assert.equal(second, first, 'the same list, grown in place');
  assert.deepEqual(second, ['a', 'b']);
});

test('appended keeps the order of every item added, however many', () => {
  let list: number[] | undefined;
  for (let i = 0; i < 40; i++) list = appended(list, i);
  assert.deepEqual(
    list,
    Array.from({ length: 40 }, (_, i) => i),
  );
});
