import { test } from 'node:test';
import assert from 'node:assert/strict';
import { allSurelyHaveRoom, boundOf, surelyHasRoom, tierBounds } from '#src/routing/tier-room.ts';

const BOUNDS: { name: string; slots?: number; budget?: number; leaseCtx: number; want: number }[] = [
  { name: 'no limits', leaseCtx: 4096, want: 0x7fffffff },
  { name: 'slots only', slots: 4, leaseCtx: 4096, want: 4 },
  { name: 'a unified pool (budget = one context): idle only', slots: 4, budget: 4096, leaseCtx: 4096, want: 1 },
  { name: 'per-slot pools (budget = slots x context): the slots', slots: 4, budget: 16_384, leaseCtx: 4096, want: 4 },
  { name: 'a budget of three contexts, more slots', slots: 8, budget: 12_288, leaseCtx: 4096, want: 3 },
  { name: 'a budget with no known context: idle only', budget: 12_288, leaseCtx: 0, want: 1 },
  { name: 'zero slots: never', slots: 0, leaseCtx: 4096, want: 0 },
];

for (const c of BOUNDS) {
  test(`room bound: ${c.name}`, () => {
    assert.equal(boundOf({ slots: c.slots, budget: c.budget, leaseCtx: c.leaseCtx }), c.want);
  });
}

const tier = (limits: { position: number; slots?: number; budget?: number }[]) =>
  tierBounds(limits.map((l) => ({ node: { position: l.position }, slots: l.slots, budget: l.budget, leaseCtx: 100 })));

const ROOM: { name: string; counts: number[]; limit?: number; want: boolean[] }[] = [
  { name: 'under every bound', counts: [0, 1, 0], want: [true, true, true] },
  { name: 'at the slots', counts: [2, 1, 0], want: [false, true, true] },
  { name: 'busy on a unified pool', counts: [0, 1, 1], want: [true, true, false] },
  { name: 'at the connection limit', counts: [0, 3, 0], limit: 3, want: [true, false, true] },
];

for (const c of ROOM) {
  test(`surely has room: ${c.name}`, () => {
    const bounds = tier([{ position: 2, slots: 2 }, { position: 0 }, { position: 1, slots: 4, budget: 100 }]);
    assert.ok(bounds !== undefined);
    // The tier lists positions 2, 0, 1: counts are read by position.
    const byPosition = [c.counts[1] ?? 0, c.counts[2] ?? 0, c.counts[0] ?? 0];
    assert.deepEqual(
      [0, 1, 2].map((i) => surelyHasRoom(bounds, i, byPosition, c.limit)),
      c.want,
    );
    assert.equal(allSurelyHaveRoom(bounds, byPosition, c.limit), c.want.every(Boolean));
  });
}

test('views without positions: no bounds (the lease table decides)', () => {
  assert.equal(tierBounds([{ node: {}, slots: 2, budget: undefined, leaseCtx: 0 }]), undefined);
});
