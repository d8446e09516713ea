import assert from 'node:assert/strict';
import { test } from 'node:test';
import { busySlotCount, emptySlotTable, enqueueJob, removeJob } from '#src/sim/slot-table.ts';

test('admits jobs into free slots lowest index first', () => {
  let table = emptySlotTable(2);
  const first = enqueueJob(table, 1);
  table = first.table;
  const second = enqueueJob(table, 2);
  assert.deepEqual(first.started, [{ jobId: 1, slot: 0 }]);
  assert.deepEqual(second.started, [{ jobId: 2, slot: 1 }]);
  assert.equal(busySlotCount(second.table), 2);
});

test('queues jobs beyond the slots and admits them first in, first out', () => {
  let table = emptySlotTable(1);
  for (const id of [1, 2, 3]) table = enqueueJob(table, id).table;
  assert.deepEqual(table.waiting, [2, 3]);
  const freed = removeJob(table, 1);
  assert.deepEqual(freed.started, [{ jobId: 2, slot: 0 }]);
  assert.deepEqual(freed.table.waiting, [3]);
});

test('removing a waiting job drops it from the queue without starting anything', () => {
  let table = emptySlotTable(1);
  for (const id of [1, 2, 3]) table = enqueueJob(table, id).table;
  const change = removeJob(table, 2);
  assert.deepEqual(change.started, []);
  assert.deepEqual(change.table.waiting, [3]);
  assert.deepEqual(change.table.slots, [1]);
});

test('a new job waits behind queued jobs even if a slot just became free', () => {
  const table = { slots: [null, 7], waiting: [8] };
  const change = enqueueJob(table, 9);
  assert.deepEqual(change.started, []);
  assert.deepEqual(change.table.waiting, [8, 9]);
});

test('never mutates the table it is given', () => {
  const table = Object.freeze({ slots: Object.freeze([1, null]), waiting: Object.freeze([]) });
  enqueueJob(table, 2);
  removeJob(table, 1);
  assert.deepEqual(table, { slots: [1, null], waiting: [] });
});
