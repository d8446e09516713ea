// The gateway's own queue for a limited router, swap-aware (issue 41 item 3): same-model requests
// together, the running model first, and a model whose oldest request has waited the bound
// (routing.swap_after) before the running one, so a model asked for rarely is not starved.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { swapAwareOrder, swapAwareRequests } from '#src/scheduler/swap-order.ts';

/** "A B A A C" arriving 1 ms apart from t = 0. */
const requests = (letters: string): { model: string; atMs: number; n: number }[] =>
  letters.split(' ').map((model, n) => ({ model, atMs: n, n }));

const served = (letters: string, running: string[], nowMs: number, boundMs: number): string =>
  swapAwareRequests(requests(letters), new Set(running), nowMs, boundMs)
    .map((r) => r.model)
    .join(' ');

const cases: readonly (readonly [string, string, string[], number, number, string])[] = [
  ['nothing running, all within the bound', 'A B A A C', [], 10, 5_000, 'A A A B C'],
  ['B running: its requests first', 'A B A A C', ['B'], 10, 5_000, 'B A A A C'],
  ['A running', 'B A C A A', ['A'], 10, 5_000, 'A A A B C'],
  ['A running, B waited the bound: B before A', 'B A A C A', ['A'], 5_000, 5_000, 'B A A A C'],
  ['A running, B and C past the bound: by their oldest request', 'C A B A', ['A'], 6_000, 5_000, 'C B A A'],
  ['bound 0: every model not running is overdue, first come first', 'A B A A C', ['C'], 10, 0, 'A A A B C'],
  ['one model', 'A A A', [], 0, 5_000, 'A A A'],
];

for (const [name, letters, running, now, bound, expected] of cases) {
  test(`order: ${name}: "${letters}" → "${expected}"`, () => {
    assert.equal(served(letters, running, now, bound), expected);
  });
}

test('within a model its own order is kept', () => {
  const order = swapAwareRequests(requests('A B A A C'), new Set(), 10, 5_000);
  assert.deepEqual(
    order.filter((r) => r.model === 'A').map((r) => r.n),
    [0, 2, 3],
  );
});

test("models: ties keep their given order; the bound is each model's own", () => {
  const at = (model: string, oldestAtMs: number, running: boolean, boundMs: number) => ({ model, oldestAtMs, running, boundMs });
  assert.deepEqual(swapAwareOrder([at('x', 5, false, 100), at('y', 5, false, 100)], 10), ['x', 'y']);
  assert.deepEqual(swapAwareOrder([at('run', 9, true, 100), at('slow', 0, false, 1_000), at('fast', 1, false, 5)], 10), [
    'fast',
    'run',
    'slow',
  ]);
});
