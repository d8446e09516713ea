// A node's generation speed, between the registry that learns it (capacity/decode-rate.ts) and the
// attempts that use and teach it: the rate an attempt charges a client that left by (usable now,
// or none), and what a delivered answer teaches (docs/tenants.md, "What is charged").

import { tokensPerSecond, usableDecode, type DecodeSample } from '#src/capacity/index.ts';
import type { NodeView } from '#src/nodes/index.ts';
import type { KnownRate } from '../attempt/answer-usage.ts';
import type { AttemptOutcome } from '../attempt/attempt-outcome.ts';

/** Pure: the node's learned speed for `model` if it may be used at `nowMs`; undefined = none yet (the prompt alone is charged). */
export function knownRate(node: Pick<NodeView, 'decodeRates'>, model: string, nowMs: number): KnownRate | undefined {
  const rate = usableDecode(node.decodeRates?.[model], nowMs);
  return rate === undefined ? undefined : { tokensPerSecond: tokensPerSecond(rate), firstTokenMs: rate.firstTokenMs };
}

/**
 * Pure: what an attempt's outcome teaches of the node's speed: a 200 answer delivered whole, for a
 * request that asked for one answer (several are generated side by side, and their chunks counted
 * together); undefined = nothing.
 */
export function speedLesson(outcome: AttemptOutcome, choices: number): DecodeSample | undefined {
  if (outcome.kind !== 'delivered' || outcome.status !== 200 || choices !== 1) return undefined;
  return outcome.decode;
}
