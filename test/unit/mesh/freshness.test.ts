import { test } from 'node:test';
import assert from 'node:assert/strict';
import { freshnessChanges, isFresh, nextExpiry } from '#src/mesh/freshness.ts';

test('freshness: fresh while the last accepted record is no older than the window', () => {
  const cases: { acceptedAt: number | undefined; now: number; want: boolean }[] = [
    { acceptedAt: undefined, now: 0, want: false },
    { acceptedAt: 1_000, now: 1_000, want: true },
    { acceptedAt: 1_000, now: 16_000, want: true },
    { acceptedAt: 1_000, now: 16_001, want: false },
  ];
  for (const c of cases) assert.equal(isFresh(c.acceptedAt, c.now, 15_000), c.want, JSON.stringify(c));
});

test('freshness transitions are reported once each; a never-heard site starts stale silently', () => {
  const reported = new Map<string, boolean>();
  const apply = (now: Map<string, boolean>) => {
    const changes = freshnessChanges(reported, now);
    for (const c of changes) reported.set(c.site, c.fresh);
    return changes;
  };
  assert.deepEqual(apply(new Map([['b', false]])), []);
  assert.deepEqual(apply(new Map([['b', true]])), [{ site: 'b', fresh: true }]);
  assert.deepEqual(apply(new Map([['b', true]])), []);
  assert.deepEqual(apply(new Map([['b', false]])), [{ site: 'b', fresh: false }]);
  assert.deepEqual(apply(new Map([['b', false]])), []);
  assert.deepEqual(
    apply(
      new Map([
        ['b', true],
        ['c', true],
      ]),
    ),
    [
      { site: 'b', fresh: true },
      { site: 'c', fresh: true },
    ],
  );
});

test('the next freshness check is when the earliest fresh site would turn stale', () => {
  assert.equal(nextExpiry([undefined, 1_000, 5_000], 2_000, 10_000), 11_001);
  assert.equal(nextExpiry([1_000], 20_000, 10_000), undefined);
  assert.equal(nextExpiry([], 0, 10_000), undefined);
});
