import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sumPoolFigures } from '#src/workers/figures.ts';

test('upstream figures are summed per node over the owner and every worker', () => {
  const f = (connected: number, running: number, saturated = false) => ({ limit: 4, connected, running, pending: 0, saturated });
  assert.deepEqual(sumPoolFigures([]), {});
  assert.deepEqual(sumPoolFigures([{ a: f(1, 1) }, { a: f(2, 0), b: f(1, 1, true) }, { a: f(0, 0, true) }]), {
    a: { limit: 12, connected: 3, running: 1, pending: 0, saturated: true },
    b: { limit: 4, connected: 1, running: 1, pending: 0, saturated: true },
  });
});
