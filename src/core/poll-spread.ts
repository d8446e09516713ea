// Polling loops start every node's first round at once (a fresh gateway wants to know its fleet
// now). Left like that, a large fleet stays in lockstep: every interval, thousands of requests
// leave together, their sockets, buffers and promises are all alive at the same moment (so they
// survive young-generation collections and are promoted), and a busy gateway times many of them
// out at once. Delaying each node's second round spreads the rounds from then on — in a few
// groups, not one phase per node: every timer wake-up costs the event loop a turn, and at 100
// nodes one wake-up per node cost more CPU (5–6.5 % of a core against 3 %) than it saved.

/** Fleets smaller than this stay in step: a few simultaneous polls cost nothing. */
export const SPREAD_FROM_NODES = 32;
/** How many groups a large fleet's rounds are spread into over one interval. */
export const SPREAD_GROUPS = 8;

/** Pure: the extra delay before node `index` (of `count`) polls again after its first round. */
export function spreadDelayMs(index: number, count: number, intervalMs: number): number {
  if (count < SPREAD_FROM_NODES) return 0;
  const group = Math.floor((index * SPREAD_GROUPS) / count);
  return Math.floor((group * intervalMs) / SPREAD_GROUPS);
}
