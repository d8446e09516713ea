// The fallback share (fallback-share.ts): slots / live replicas, rounded down, at least 1 where the
// node has any slot; defined for every input (a NaN share admitted nothing, issue 38 item 6).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fallbackShare } from '#src/cluster/index.ts';

test('fallbackShare: slots / live, rounded down, at least 1 where the node has a slot; never NaN', () => {
  const NaN_ = Number.NaN;
  const INF = Number.POSITIVE_INFINITY;
  const cases: [number, number, number][] = [
    [4, 1, 4],
    [4, 2, 2],
    [4, 3, 1],
    [4, 5, 1],
    [1, 100, 1],
    [7, 2, 3],
    [4, 2.9, 2],
    [0.5, 1, 1],
    // No slot: none in fallback either (none is granted shared).
    [0, 1, 0],
    [-2, 1, 0],
    [-INF, 1, 0],
    // A live count that is not one: this replica alone.
    [4, NaN_, 4],
    [4, 0, 4],
    [4, -1, 4],
    [4, INF, 4],
    [4, 0.5, 4],
    // Slots that are not a count: one at a time.
    [NaN_, 2, 1],
    [INF, 2, 1],
    [NaN_, NaN_, 1],
  ];
  for (const [slots, live, expected] of cases) {
    const share = fallbackShare(slots, live);
    assert.equal(share, expected, `fallbackShare(${slots}, ${live})`);
    assert.ok(Number.isInteger(share) && share >= 0, `an integer ≥ 0 (${slots}, ${live})`);
  }
});
