// PerNodeLoop's timers: a round's timer that fired is not cancelled again (clearing a fired timer
// costs the runtime's timer code on every round); a round run early cancels the pending one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock, type Clock, type Timer } from '#src/core/clock.ts';
import { PerNodeLoop } from '#src/nodes/per-node-loop.ts';
import { spec } from '#test/fixtures/builders.ts';

/** A ManualClock that counts cancels of timers that had already fired, and of pending ones. */
function countingClock(): { clock: Clock; manual: ManualClock; cancels: { fired: number; pending: number } } {
  const manual = new ManualClock();
  const cancels = { fired: 0, pending: 0 };
  const clock: Clock = {
    now: () => manual.now(),
    monotonicMs: () => manual.monotonicMs(),
    setTimeout(fn: () => void, ms: number): Timer {
      let fired = false;
      const timer = manual.setTimeout(() => {
        fired = true;
        fn();
      }, ms);
      return {
        cancel: () => {
          if (fired) cancels.fired += 1;
          else cancels.pending += 1;
          timer.cancel();
        },
      };
    },
  };
  return { clock, manual, cancels };
}

test('a round started by its timer does not cancel the timer that fired', async () => {
  const { clock, manual, cancels } = countingClock();
  const rounds: string[] = [];
  const loop = new PerNodeLoop<string>({
    clock,
    intervalMs: 1_000,
    run: (node) => Promise.resolve(node.name),
    failed: () => 'failed',
    onResult: (_node, result) => rounds.push(result),
  });
  loop.setNodes([spec('a')]);
  const controller = new AbortController();
  loop.start(controller.signal);
  for (let i = 0; i < 5; i++) {
    await new Promise<void>((resolve) => setImmediate(resolve));
    manual.advance(1_000);
  }
  await new Promise<void>((resolve) => setImmediate(resolve));
  assert.equal(rounds.length, 6, 'the first round and five on the timer');
  assert.equal(cancels.fired, 0, 'no fired timer cancelled');
  loop.runNow('a');
  assert.equal(cancels.pending, 1, 'a round run early cancels the pending timer');
  controller.abort();
  assert.equal(manual.pendingTimers(), 0, 'stopping cancels the last one');
  assert.equal(cancels.fired, 0);
});
