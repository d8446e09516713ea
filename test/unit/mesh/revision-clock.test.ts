import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RevisionClock, REVISIONS_PER_MS } from '#src/mesh/revision-clock.ts';

test('revisions follow the wall clock × 1024 and rise on every call', () => {
  const cases: readonly { name: string; walls: readonly number[]; want: readonly number[] }[] = [
    { name: 'a steady clock', walls: [1000, 2000, 3000], want: [1000 * 1024, 2000 * 1024, 3000 * 1024] },
    { name: 'several in one millisecond', walls: [1000, 1000, 1000], want: [1024000, 1024001, 1024002] },
    { name: 'the wall clock steps back', walls: [5000, 4000, 4000], want: [5120000, 5120001, 5120002] },
    { name: 'the wall clock catches up', walls: [5000, 4000, 5001], want: [5120000, 5120001, 5001 * 1024] },
    { name: 'fractional milliseconds', walls: [1000.9, 1001.2], want: [1024000, 1025024] },
  ];
  for (const { name, walls, want } of cases) {
    const clock = new RevisionClock();
    assert.deepEqual(
      walls.map((wall) => clock.next(wall)),
      want,
      name,
    );
  }
});

test('a restarted site issues revisions above those of its previous run without a file', () => {
  const before = new RevisionClock();
  let last = 0;
  for (let i = 0; i < 500; i++) last = before.next(1_700_000_000_000); // a burst within one millisecond
  const after = new RevisionClock(); // restart, a millisecond later
  assert.ok(after.next(1_700_000_000_001) > last);
});

test("revisions stay safe integers for today's wall clock and a known last revision is respected", () => {
  const now = Date.UTC(2026, 11, 1);
  assert.ok(Number.isSafeInteger(new RevisionClock().next(now)));
  assert.ok(Number.isSafeInteger(new RevisionClock().next(Date.UTC(2240, 0, 1))));
  assert.equal(new RevisionClock(now * REVISIONS_PER_MS + 10).next(now), now * REVISIONS_PER_MS + 11);
  assert.throws(() => new RevisionClock(-1), /non-negative safe integer/);
  assert.throws(() => new RevisionClock(Number.MAX_SAFE_INTEGER).next(0), /largest safe integer/);
});
