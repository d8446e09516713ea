// sameCapacity: whether a fresh capacity reading says anything new, field by field.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NO_CAPACITY, sameCapacity, type NodeCapacity } from '#src/capacity/index.ts';

const base: NodeCapacity = {
  role: 'single',
  host: { nCtx: 4096, slots: 2 },
  models: { a: { nCtx: 4096, slots: 2 }, b: { nCtx: 8192, slots: undefined } },
  loadedIds: ['a', 'b'],
};

test('a reading is the same as another exactly when every figure matches', () => {
  const rows: readonly (readonly [string, NodeCapacity, boolean])[] = [
    ['the same object', base, true],
    [
      'an equal copy built separately',
      { ...base, host: { ...base.host, nCtx: 4096, slots: 2 }, models: { ...base.models }, loadedIds: ['a', 'b'] },
      true,
    ],
    [
      'the same models listed in another order',
      { ...base, models: { b: { nCtx: 8192, slots: undefined }, a: { nCtx: 4096, slots: 2 } } },
      true,
    ],
    ['another role', { ...base, role: 'router' }, false],
    ['no host figures', { ...base, host: undefined }, false],
    ['another host context', { ...base, host: { nCtx: 2048, slots: 2 } }, false],
    ['another host slot count', { ...base, host: { nCtx: 4096, slots: 4 } }, false],
    ['a model context changed', { ...base, models: { ...base.models, a: { nCtx: 2048, slots: 2 } } }, false],
    ['a model slot count now known', { ...base, models: { ...base.models, b: { nCtx: 8192, slots: 1 } } }, false],
    ['a model gone', { ...base, models: { a: { nCtx: 4096, slots: 2 } } }, false],
    [
      'a model swapped for another with the same figures',
      { ...base, models: { a: { nCtx: 4096, slots: 2 }, c: { nCtx: 8192, slots: undefined } } },
      false,
    ],
    ['loaded ids no longer reported', { ...base, loadedIds: undefined }, false],
    ['loaded ids in another order', { ...base, loadedIds: ['b', 'a'] }, false],
    ['one more loaded id', { ...base, loadedIds: ['a', 'b', 'c'] }, false],
  ];
  for (const [what, other, expected] of rows) {
    assert.equal(sameCapacity(base, other), expected, what);
    assert.equal(sameCapacity(other, base), expected, `${what} (the other way round)`);
  }
});

test('no capacity is the same as a separately built empty reading', () => {
  assert.equal(sameCapacity(NO_CAPACITY, { role: 'unknown', host: undefined, models: {}, loadedIds: undefined }), true);
});
