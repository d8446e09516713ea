// least-in-flight reads every candidate's live count per decision (issue 39 retired the load order
// and the packed positions it was measured against: docs/design.md, "Three product questions").
// These are the properties the removed structures' tests held that still matter: counts read by
// position and aligned with the candidates, live, falling back to the counts by name; the least
// loaded picked, ties taken in candidate order and then in turn, a lease taken or returned seen at
// the next decision.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InFlightCounts } from '#src/nodes/in-flight-counts.ts';
import type { NodeView, RoutingSnapshot } from '#src/nodes/index.ts';
import { inFlights, leastInFlight, pickLowest } from '#src/routing/policies/least-in-flight.ts';
import { node, request, snapshotOf } from '#test/fixtures/builders.ts';

const positioned = (count: number, at: (i: number) => number = (i) => i): NodeView[] =>
  Array.from({ length: count }, (_, i) => ({ ...node(`n${i}`), position: at(i) }));

/** A snapshot whose counts by position are the registry's live array (journalled, as the gateway's). */
function live(nodes: readonly NodeView[], counts: number[]): { snapshot: RoutingSnapshot; counts: InFlightCounts } {
  const journal = new InFlightCounts(undefined);
  journal.reset(counts);
  return {
    snapshot: { ...snapshotOf(nodes), inFlightByPosition: journal.byPosition, inFlightChanges: journal },
    counts: journal,
  };
}

/** The candidate index least-in-flight picks `times` times in a row over the same array. */
function picks(nodes: readonly NodeView[], snapshot: RoutingSnapshot, times: number, policy = leastInFlight()): number[] {
  return Array.from({ length: times }, () => {
    const choice = policy.choose(request('m'), nodes, snapshot);
    assert.ok(choice !== undefined);
    return nodes.indexOf(choice.node);
  });
}

test('the counts are read by position, aligned with the candidates', () => {
  const nodes = positioned(5, (i) => 4 - i);
  assert.deepEqual(inFlights(nodes, { ...snapshotOf(nodes), inFlightByPosition: [10, 11, 12, 13, 14] }), [14, 13, 12, 11, 10]);
});

test('views without positions (or a snapshot without the array) fall back to the counts by name', () => {
  const nodes = [node('a'), node('b')];
  assert.deepEqual(inFlights(nodes, snapshotOf(nodes, { a: 2, b: 5 })), [2, 5]);
  const mixed = [{ ...node('a'), position: 0 }, node('b')];
  assert.deepEqual(inFlights(mixed, { ...snapshotOf(mixed, { a: 1, b: 4 }), inFlightByPosition: [9] }), [9, 4]);
});

const CASES: { name: string; counts: number[]; positions?: number[]; want: number[]; reason: string }[] = [
  { name: 'the single least loaded', counts: [3, 1, 2], want: [1, 1], reason: 'fewest in flight (1, 1 tied)' },
  {
    name: 'ties in candidate order, then round',
    counts: [2, 0, 5, 0, 0],
    want: [1, 3, 4, 1],
    reason: 'fewest in flight (0, 3 tied)',
  },
  {
    name: 'positions other than the candidate order',
    counts: [0, 4, 0, 9],
    positions: [3, 2, 1],
    want: [1, 1],
    reason: 'fewest in flight (0, 1 tied)',
  },
  { name: 'a count past the first few', counts: [40, 17, 99], want: [1], reason: 'fewest in flight (17, 1 tied)' },
];

for (const c of CASES) {
  test(`least-in-flight: ${c.name}`, () => {
    const positions = c.positions ?? c.counts.map((_, i) => i);
    const nodes = positioned(positions.length, (i) => positions[i] as number);
    const { snapshot } = live(nodes, c.counts.slice());
    assert.equal(leastInFlight().choose(request('m'), nodes, snapshot)?.reason, c.reason);
    assert.deepEqual(picks(nodes, snapshot, c.want.length), c.want);
  });
}

test('least-in-flight: on unchanged counts, ties rotate exactly as pickLowest with a turn per decision', () => {
  const counts = [1, 0, 0, 2, 0, 1, 0];
  const nodes = positioned(counts.length);
  const { snapshot } = live(nodes, counts.slice());
  const scored = Array.from({ length: 12 }, (_, turn) => nodes.indexOf(pickLowest(nodes, counts, turn)?.node as NodeView));
  assert.deepEqual(picks(nodes, snapshot, 12), scored);
});

test('least-in-flight: a lease taken or returned is seen by the next decision', () => {
  const nodes = positioned(3);
  const { snapshot, counts } = live(nodes, [0, 0, 0]);
  const policy = leastInFlight();
  counts.set(0, 1);
  counts.set(1, 1);
  assert.deepEqual(picks(nodes, snapshot, 2, policy), [2, 2]);
  counts.set(2, 3);
  counts.set(1, 0);
  assert.deepEqual(picks(nodes, snapshot, 1, policy), [1]);
  assert.deepEqual(policy.choose(request('m'), nodes, snapshot)?.scores, [1, 0, 3]);
});

test('least-in-flight: no candidates, no pick', () => {
  assert.equal(leastInFlight().choose(request('m'), [], snapshotOf([])), undefined);
});
