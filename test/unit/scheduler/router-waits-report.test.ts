// What /admin/models shows of the loads a router that queues itself holds our requests for: per node,
// one row per model with its requests and the oldest one's wait, oldest first; a wait that ended is gone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RouterWaits } from '#src/scheduler/router-waits.ts';

test('router waits report: merged per model, oldest first, ended waits left out', () => {
  const waits = new RouterWaits();
  const endC = waits.start('r', 'c', 100, 5_000);
  waits.start('r', 'b', 200, 5_000);
  waits.start('r', 'c', 300, 5_000);
  const endOther = waits.start('s', 'b', 50, 5_000);
  assert.deepEqual(Object.fromEntries(waits.report(1_000)), {
    r: [
      { model: 'c', requests: 2, waitedMs: 900 },
      { model: 'b', requests: 1, waitedMs: 800 },
    ],
    s: [{ model: 'b', requests: 1, waitedMs: 950 }],
  });
  endC(1_000);
  endOther(undefined);
  assert.deepEqual(Object.fromEntries(waits.report(1_500)), {
    r: [
      { model: 'b', requests: 1, waitedMs: 1_300 },
      { model: 'c', requests: 1, waitedMs: 1_200 },
    ],
  });
});
