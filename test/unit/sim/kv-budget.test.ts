import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isKvExhausted, kvTokensInUse, kvUsageRatio } from '#src/sim/kv-budget.ts';

test('a unified pool is exhausted only when the requests together exceed it', () => {
  const cases: [readonly number[], boolean][] = [
    [[], false],
    [[100], false],
    [[60, 40], false],
    [[60, 41], true],
    [[101], true],
  ];
  for (const [usages, expected] of cases) assert.equal(isKvExhausted('unified', 100, usages), expected, String(usages));
});

test('per-slot budgets never exhaust together', () => {
  assert.equal(isKvExhausted('per-slot', 100, [90, 90, 90]), false);
});

test('reports usage as a fraction of the pool (unified) or of all slots (per-slot)', () => {
  assert.equal(kvTokensInUse([10, 20]), 30);
  assert.equal(kvUsageRatio('unified', 100, 4, [25, 25]), 0.5);
  assert.equal(kvUsageRatio('per-slot', 100, 4, [25, 25]), 0.125);
  assert.equal(kvUsageRatio('unified', 100, 4, [300]), 1);
});
