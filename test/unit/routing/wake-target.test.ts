// wakeTarget: which asleep node a request wakes; a wake still under way at the snapshot's `now`
// is reused rather than waking a second node.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { NodeView } from '#src/nodes/index.ts';
import { defaultFilters, wakeTarget } from '#src/routing/index.ts';
import { NOW, node, request, snapshotOf } from '#test/fixtures/builders.ts';

function asleep(name: string, wakingUntil?: number): NodeView {
  const view = node(name, { models: ['m'], phase: 'expired' });
  return {
    ...view,
    health: { ...view.health, status: 'asleep' },
    wake: { lastSentAt: wakingUntil === undefined ? undefined : NOW - 1, wakingUntil },
  };
}

test('the node to wake is one already waking, else the first that could serve', () => {
  const rows: readonly (readonly [string, readonly NodeView[], { node: string; alreadyWaking: boolean } | undefined])[] = [
    ['none asleep', [node('awake', { models: ['m'] })], undefined],
    ['none waking', [asleep('a'), asleep('b')], { node: 'a', alreadyWaking: false }],
    ['the second waking', [asleep('a'), asleep('b', NOW + 1)], { node: 'b', alreadyWaking: true }],
    ['a wake whose window just ended', [asleep('a'), asleep('b', NOW)], { node: 'a', alreadyWaking: false }],
  ];
  for (const [what, nodes, expected] of rows) {
    const target = wakeTarget(request('m'), snapshotOf(nodes), defaultFilters());
    assert.deepEqual(
      target === undefined ? undefined : { node: target.node.spec.name, alreadyWaking: target.alreadyWaking },
      expected,
      what,
    );
  }
});
