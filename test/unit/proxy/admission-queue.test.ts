import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '#src/core/clock.ts';
import { AdmissionQueue } from '#src/proxy/index.ts';

const never = new AbortController().signal;

test('waiters are woken one at a time in arrival order', async () => {
  const queue = new AdmissionQueue(new ManualClock());
  const first = queue.enter('m', 1000, never);
  const second = queue.enter('m', 1000, never);
  const order: string[] = [];
  const a = first.wait().then((o) => order.push(`first:${o}`));
  const b = second.wait().then((o) => order.push(`second:${o}`));
  queue.wake('m');
  await a;
  assert.deepEqual(order, ['first:woken']);
  first.leave();
  queue.wake('m');
  await b;
  assert.deepEqual(order, ['first:woken', 'second:woken']);
  second.leave();
  assert.equal(queue.depth('m'), 0);
});

test('a wake that arrives between two tries is kept, not lost', async () => {
  const queue = new AdmissionQueue(new ManualClock());
  const ticket = queue.enter('m', 1000, never);
  queue.wake('m');
  assert.equal(await ticket.wait(), 'woken');
});

test('a waiter times out at its own deadline, measured from when it entered', async () => {
  const clock = new ManualClock();
  const queue = new AdmissionQueue(clock);
  const ticket = queue.enter('m', 500, never);
  const outcome = ticket.wait();
  clock.advance(499);
  clock.advance(1);
  assert.equal(await outcome, 'timeout');
  assert.equal(await ticket.wait(), 'timeout', 'a later wait past the deadline times out at once');
  ticket.leave();
  assert.deepEqual(queue.depths(), {});
});

test('a client that goes away ends its wait', async () => {
  const queue = new AdmissionQueue(new ManualClock());
  const controller = new AbortController();
  const ticket = queue.enter('m', 1000, controller.signal);
  const outcome = ticket.wait();
  controller.abort();
  assert.equal(await outcome, 'aborted');
});

test('queues are per model', async () => {
  const queue = new AdmissionQueue(new ManualClock());
  queue.enter('a', 1000, never);
  const b = queue.enter('b', 1000, never);
  const waiting = b.wait();
  queue.wake('b');
  assert.equal(await waiting, 'woken');
  assert.deepEqual(queue.depths(), { a: 1, b: 1 });
});
