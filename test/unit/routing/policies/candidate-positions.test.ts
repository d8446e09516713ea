import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CandidatePositions } from '#src/routing/policies/candidate-positions.ts';
import { inFlights } from '#src/routing/policies/least-in-flight.ts';
import { node, snapshotOf } from '#test/fixtures/builders.ts';

const positioned = (count: number) => Array.from({ length: count }, (_, i) => ({ ...node(`n${i}`), position: count - 1 - i }));

test('the counts are read by position, aligned with the candidates, as inFlights reads them', () => {
  const nodes = positioned(5);
  const snapshot = { ...snapshotOf(nodes), inFlightByPosition: [10, 11, 12, 13, 14] };
  const positions = new CandidatePositions();
  assert.deepEqual(positions.inFlights(nodes, snapshot), [14, 13, 12, 11, 10]);
  assert.deepEqual(positions.inFlights(nodes, snapshot), inFlights(nodes, snapshot));
});

test('a count that changes is read live; a new candidates array gets its own positions', () => {
  const nodes = positioned(3);
  const counts = [0, 0, 0];
  const snapshot = { ...snapshotOf(nodes), inFlightByPosition: counts };
  const positions = new CandidatePositions();
  assert.deepEqual(positions.inFlights(nodes, snapshot), [0, 0, 0]);
  counts[2] = 7;
  assert.deepEqual(positions.inFlights(nodes, snapshot), [7, 0, 0]);
  const fewer = [nodes[2] ?? assert.fail()];
  assert.deepEqual(positions.inFlights(fewer, snapshot), [0]);
});

test('views without positions (or a snapshot without the array) fall back to the counts by name', () => {
  const nodes = [node('a'), node('b')];
  const positions = new CandidatePositions();
  assert.deepEqual(positions.inFlights(nodes, snapshotOf(nodes, { a: 2, b: 5 })), [2, 5]);
  const mixed = [{ ...node('a'), position: 0 }, node('b')];
  assert.deepEqual(positions.inFlights(mixed, { ...snapshotOf(mixed, { a: 1, b: 4 }), inFlightByPosition: [9] }), [9, 4]);
});
