// A sufficient test that a tier node has room for one more request, from its live in-flight count
// alone: its requests of the model (the lease table's count) never exceed its requests in flight,
// so a count under the node's slots has a slot, a count under the budget's share (each lease holds
// at most the context's tokens; an idle model always admits one) has budget, and a count under the
// connection limit has a connection. The route index
// checks every tier node this way (two packed arrays and the registry's counts) and reads the lease
// table only for a node this cannot clear: at 10,000 nodes with slots, most requests read none.

import type { NodeView } from '#src/nodes/index.ts';

/** What the bounds read of a tier node's slot (index-entry.ts's NodeSlot). */
export interface RoomLimits {
  readonly node: Pick<NodeView, 'position'>;
  readonly slots: number | undefined;
  readonly budget: number | undefined;
  /** The context a lease's reserved tokens are capped by (0 = unknown). */
  readonly leaseCtx: number;
}

const UNBOUNDED = 0x7fffffff;

/** Per tier node, aligned with the tier: its view position, and the count under which it surely has room. */
export interface TierBounds {
  readonly positions: Int32Array;
  readonly bounds: Int32Array;
}

/** The tier's bounds; undefined when some view has no position (a test's views). */
export function tierBounds(tier: readonly RoomLimits[]): TierBounds | undefined {
  const positions = new Int32Array(tier.length);
  const bounds = new Int32Array(tier.length);
  for (let i = 0; i < tier.length; i += 1) {
    const slot = tier[i] as RoomLimits;
    const position = slot.node.position;
    if (position === undefined) return undefined;
    positions[i] = position;
    bounds[i] = boundOf(slot);
  }
  return { positions, bounds };
}

/** Pure: the count under which the node surely admits one more request of the model (by its slots and budget). */
export function boundOf(slot: Pick<RoomLimits, 'slots' | 'budget' | 'leaseCtx'>): number {
  let bound = slot.slots === undefined ? UNBOUNDED : Math.max(0, Math.min(UNBOUNDED, Math.floor(slot.slots)));
  if (slot.budget === undefined) return bound;
  // Each lease holds at most leaseCtx tokens, this one too: `count` leases and one more fit while
  // (count + 1) × leaseCtx ≤ budget. An idle model always admits one (count 0).
  const byBudget = slot.leaseCtx > 0 ? Math.floor(slot.budget / slot.leaseCtx) : 1;
  bound = Math.min(bound, Math.max(1, Math.min(UNBOUNDED, byBudget)));
  return bound;
}

/** Pure: whether tier node `i`'s live count clears it (under its bound and under `limit`, when there is one). */
export function surelyHasRoom(tier: TierBounds, i: number, counts: ArrayLike<number>, limit: number | undefined): boolean {
  const count = counts[tier.positions[i] as number] ?? 0;
  return count < (tier.bounds[i] as number) && (limit === undefined || count < limit);
}

/** Pure: whether every tier node's live count clears it: then the plan's verdict holds as is. */
export function allSurelyHaveRoom(tier: TierBounds, counts: ArrayLike<number>, limit: number | undefined): boolean {
  const positions = tier.positions;
  const bounds = tier.bounds;
  const cap = limit ?? UNBOUNDED;
  for (let i = 0; i < positions.length; i += 1) {
    const count = counts[positions[i] as number] ?? 0;
    if (count >= (bounds[i] as number) || count >= cap) return false;
  }
  return true;
}
