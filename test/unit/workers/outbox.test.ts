import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Outbox } from '#src/workers/outbox.ts';

test('what is sent in one turn of the event loop goes out as one batch, in order', async () => {
  const batches: (readonly number[])[] = [];
  const outbox = new Outbox<number>((batch) => batches.push(batch));
  outbox.send(1);
  outbox.send(2);
  await Promise.resolve();
  outbox.send(3);
  assert.deepEqual(batches, [], 'nothing before the turn ends');
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(batches, [[1, 2, 3]]);
  outbox.send(4);
  outbox.flush();
  outbox.flush();
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(batches, [[1, 2, 3], [4]]);
});
