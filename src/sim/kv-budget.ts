// llama.cpp's KV cache as a budget. In `unified` mode every slot of a model draws on one pool of
// n_ctx tokens, so requests that each fit can still exhaust it together; the real server then
// fails every processing slot with "Context size has been exceeded." In `per-slot` mode each slot
// owns n_ctx tokens and the per-request limit (generation stops at n_ctx) is the only bound.

import type { KvMode } from '#src/sim/spec.ts';

/** Tokens held by each processing request: its prompt plus what it generated so far. */
export function kvTokensInUse(usages: readonly number[]): number {
  return usages.reduce((sum, tokens) => sum + tokens, 0);
}

export function isKvExhausted(mode: KvMode, poolTokens: number, usages: readonly number[]): boolean {
  return mode === 'unified' && kvTokensInUse(usages) > poolTokens;
}

/** Fraction of the KV cache in use, 0..1, as the metrics gauges report it. */
export function kvUsageRatio(mode: KvMode, contextTokens: number, slotCount: number, usages: readonly number[]): number {
  const capacity = mode === 'unified' ? contextTokens : contextTokens * slotCount;
  return capacity > 0 ? Math.min(1, kvTokensInUse(usages) / capacity) : 0;
}
