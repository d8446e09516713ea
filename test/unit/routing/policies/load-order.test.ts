import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InFlightCounts } from '#src/nodes/in-flight-counts.ts';
import { IN_FLIGHT_JOURNAL_SIZE } from '#src/nodes/in-flight-counts.ts';
import { LoadOrder } from '#src/routing/policies/load-order.ts';
import { pickLowest } from '#src/routing/policies/least-in-flight.ts';

/** An order over candidates at `positions` of a journalled count array holding `counts`. */
function rig(counts: number[], positions: number[] = counts.map((_, i) => i)): { order: LoadOrder; live: InFlightCounts } {
  const live = new InFlightCounts(undefined);
  live.reset(counts.slice());
  return { order: new LoadOrder(Int32Array.from(positions), live.byPosition, live), live };
}

/** The candidate picked `times` times in a row (rotating, as the policy does). */
function picks(order: LoadOrder, times: number): number[] {
  return Array.from({ length: times }, () => {
    assert.ok(order.sync());
    const least = order.least();
    assert.ok(least >= 0);
    order.rotate(least);
    return least;
  });
}

const CASES: { name: string; counts: number[]; positions?: number[]; want: number[]; count: number; ties: number }[] = [
  { name: 'the single least loaded', counts: [3, 1, 2], want: [1, 1], count: 1, ties: 1 },
  { name: 'ties in candidate order, then round', counts: [2, 0, 5, 0, 0], want: [1, 3, 4, 1], count: 0, ties: 3 },
  {
    name: 'positions other than the candidate order',
    counts: [0, 4, 0, 9],
    positions: [3, 2, 1],
    want: [1, 1],
    count: 0,
    ties: 1,
  },
  { name: 'a count past the first buckets', counts: [40, 17, 99], want: [1], count: 17, ties: 1 },
];

for (const c of CASES) {
  test(`load order: ${c.name}`, () => {
    const { order } = rig(c.counts, c.positions);
    const least = order.least();
    assert.deepEqual([order.countOf(least), order.tiesOf(least)], [c.count, c.ties]);
    assert.deepEqual(picks(order, c.want.length), c.want);
  });
}

test('load order: static counts rotate ties exactly as pickLowest with a turn per decision', () => {
  const counts = [1, 0, 0, 2, 0, 1, 0];
  const { order } = rig(counts);
  const candidates = counts.map((_, i) => i);
  const scored = Array.from({ length: 12 }, (_, turn) => pickLowest(candidates as never, counts, turn)?.node);
  assert.deepEqual(picks(order, 12), scored);
});

test('load order: a lease taken or returned moves its candidate, read from the journal', () => {
  const { order, live } = rig([0, 0, 0]);
  live.set(0, 1);
  live.set(1, 1);
  assert.deepEqual(picks(order, 2), [2, 2]);
  live.set(2, 3);
  live.set(1, 0);
  assert.deepEqual(picks(order, 1), [1]);
  assert.deepEqual(
    [0, 1, 2].map((i) => order.countOf(i)),
    [1, 0, 3],
  );
});

test('load order: a change to a position outside the candidates is skipped', () => {
  const { order, live } = rig([5, 0, 1], [0, 2]);
  live.set(1, 7);
  assert.deepEqual(picks(order, 1), [1]);
});

test('load order: a journal that forgot changes asks for a rebuild', () => {
  const { order, live } = rig([0, 0]);
  for (let i = 0; i <= IN_FLIGHT_JOURNAL_SIZE; i += 1) live.set(i % 2, i % 3);
  assert.equal(order.sync(), false);
});

test('load order: no candidates, no pick', () => {
  assert.equal(rig([]).order.least(), -1);
});
