// Polling loops start every node's first round at once (a fresh gateway wants to know its fleet
// now). Left like that, a large fleet stays in lockstep: every interval, thousands of requests
// leave together, their sockets, buffers and promises are all alive at the same moment (so they
// survive young-generation collections and are promoted), and a busy gateway times many of them
// out at once. Delaying each node's second round by its share of one interval spreads the rounds
// evenly from then on.

/** Fleets smaller than this stay in step: a few simultaneous polls cost nothing. */
export const SPREAD_FROM_NODES = 32;

/** Pure: the extra delay before node `index` (of `count`) polls again after its first round. */
export function spreadDelayMs(index: number, count: number, intervalMs: number): number {
  return count < SPREAD_FROM_NODES ? 0 : Math.floor((index * intervalMs) / count);
}
