// Issue 44, replicas: the runner follows the runner lease (runner-turns.ts): it runs only while the
// lease is held, stops when it passes, and a lease taken again starts it only once the stop before
// has finished (its lines in flight answered), never over them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RunnerTurns, type RunnerLease } from '#src/batch/runner-turns.ts';

function lease(): RunnerLease & { set(held: boolean): void } {
  let held = false;
  const listeners = new Set<() => void>();
  return {
    held: () => held,
    onChange: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    set: (next) => {
      held = next;
      for (const l of [...listeners]) l();
    },
  };
}

const flush = async (): Promise<void> => {
  for (let i = 0; i < 5; i += 1) await new Promise((resolve) => setImmediate(resolve));
};

test('the runner runs only while the lease is held; a lease taken again waits for the stop before', async () => {
  const l = lease();
  const calls: string[] = [];
  let finishStop: () => void = () => {};
  const turns = new RunnerTurns(
    l,
    {
      start: () => void calls.push('start'),
      stop: () => {
        calls.push('stop');
        return new Promise<void>((resolve) => {
          finishStop = () => {
            calls.push('stopped');
            resolve();
          };
        });
      },
    },
    (error) => assert.fail(String(error)),
  );
  turns.start();
  await flush();
  assert.deepEqual(calls, [], 'not held: nothing runs');
  assert.equal(turns.running(), false);
  l.set(true);
  await flush();
  assert.deepEqual(calls, ['start']);
  assert.equal(turns.running(), true);
  l.set(false);
  l.set(true);
  await flush();
  assert.deepEqual(calls, ['start', 'stop'], 'the start waits for the stop under way');
  finishStop();
  await flush();
  assert.deepEqual(calls, ['start', 'stop', 'stopped', 'start']);
  const stopping = turns.stop();
  await flush();
  finishStop();
  await stopping;
  assert.deepEqual(calls, ['start', 'stop', 'stopped', 'start', 'stop', 'stopped']);
  l.set(true);
  await flush();
  assert.equal(calls.length, 6, 'stopped: the lease is no longer followed');
});
