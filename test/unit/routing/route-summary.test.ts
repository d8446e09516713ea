// What a routing decision keeps for the request's record: the policy, the reason, every candidate
// with its score (rounded; null when not finite) and every exclusion, each bounded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_SUMMARY_ENTRIES, routeSummary } from '#src/routing/index.ts';
import { node } from '#test/fixtures/builders.ts';

test('every candidate scored, every exclusion with its code, bounded', () => {
  const a = node('a');
  const b = node('b');
  const summary = routeSummary(
    'least-in-flight',
    { node: a, reason: 'fewest in flight (0, 2 tied)', scores: [0.123456, Infinity] },
    [a, b],
    [{ node: 'c', filter: 'alive', code: 'dead', detail: 'last probe: ECONNREFUSED' }],
  );
  assert.deepEqual(summary, {
    policy: 'least-in-flight',
    reason: 'fewest in flight (0, 2 tied)',
    scores: [
      { node: 'a', score: 0.1235 },
      { node: 'b', score: null },
    ],
    excluded: [{ node: 'c', code: 'dead', detail: 'last probe: ECONNREFUSED' }],
  });
  const many = Array.from({ length: MAX_SUMMARY_ENTRIES + 4 }, (_, i) => node(`n${i}`));
  const big = routeSummary(
    'round-robin',
    { node: many[0] ?? a, reason: 'turn', scores: many.map(() => 1) },
    many,
    many.map((n) => ({ node: n.spec.name, filter: 'f', code: 'dead' as const })),
  );
  assert.equal(big.scores?.length, MAX_SUMMARY_ENTRIES);
  assert.equal(big.excluded?.length, MAX_SUMMARY_ENTRIES);
  assert.equal(big.more, 8);
});
