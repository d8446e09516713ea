// prefer-healthy: an ejected node stands by until its ejection's deadline, compared with the
// snapshot's `now` (the view holds the deadline, never a judgement of the time).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { preferHealthy } from '#src/routing/filters/index.ts';
import { NOW, node, request, snapshotOf } from '#test/fixtures/builders.ts';

test('an ejected node stands by exactly until its deadline', () => {
  const rows: readonly (readonly [string, number | undefined, readonly string[]])[] = [
    ['never ejected', undefined, []],
    ['ejected until a moment from now', NOW + 1, ['flaky:ejected']],
    ['ejected until this very moment', NOW, []],
    ['ejected long ago', NOW - 60_000, []],
  ];
  for (const [what, ejectedUntil, expected] of rows) {
    const snapshot = snapshotOf([node('flaky', { models: ['m'], ejectedUntil }), node('steady', { models: ['m'] })]);
    const { excluded } = preferHealthy.apply(request('m'), snapshot.nodes, snapshot);
    assert.deepEqual(
      excluded.map((e) => `${e.node}:${e.code}`),
      expected,
      what,
    );
  }
});

test('an ejected node is still used when no other node remains', () => {
  const snapshot = snapshotOf([node('flaky', { models: ['m'], ejectedUntil: NOW + 1 })]);
  const { kept, excluded } = preferHealthy.apply(request('m'), snapshot.nodes, snapshot);
  assert.deepEqual(
    kept.map((n) => n.spec.name),
    ['flaky'],
  );
  assert.deepEqual(excluded, []);
});
