// Pure: how fast a node generates a model's tokens, learned from the answers the gateway relays —
// the tokens one answer generated over the time they took, and how long a streamed answer's first
// token took from the moment the request was sent. What a client that left before any answer
// could be read is charged for the node's generation is estimated from it (proxy/attempt/
// answer-usage.ts, estimatedWork; docs/tenants.md, "What is charged").
//
// Samples (proxy/attempt/stream-timing.ts, decodeSample; held-answer.ts):
// - a stream: the tokens after its first token-carrying chunk over the time from that chunk to the
//   last one (the decode alone), and the time from sending the request to the first token;
// - a whole answer: its completion tokens over the time from sending to the complete answer, which
//   includes the prompt's processing and any queueing at the node: a rate that errs low.
// The rate is a ratio of decayed sums (a long answer weighs more than a short one), the first
// token's time a decayed mean; both are forgotten when no answer came for DECODE_RATE_TTL_MS.

/** What one answer showed. */
export interface DecodeSample {
  /** Tokens generated over `decodeMs` (one sequence's: a request asking for several answers teaches nothing). */
  readonly tokens: number;
  readonly decodeMs: number;
  /** A stream's: from sending the request to its first generated token; undefined = not measured. */
  readonly firstTokenMs?: number | undefined;
}

export interface DecodeRate {
  /** Decayed sum of the tokens learned from… */
  readonly tokens: number;
  /** …and of the milliseconds they took: tokens / decodeMs is tokens per millisecond. */
  readonly decodeMs: number;
  /** Decayed mean time from sending to the first token (streams); undefined = none measured yet. */
  readonly firstTokenMs: number | undefined;
  readonly samples: number;
  /** When the last answer was learned from (epoch ms). */
  readonly atMs: number;
}

/** Answers with fewer generated tokens say more about the node's overheads than its speed: not learned from. */
export const DECODE_MIN_TOKENS = 4;
/** Shorter decodes are one burst of chunks (a node's buffering, a busy gateway): not learned from. */
export const DECODE_MIN_MS = 20;
/** No single sequence is generated faster than this (tokens per second): a faster sample is taken as this. */
export const DECODE_MAX_TOKENS_PER_SECOND = 5_000;
/** Answers needed before the rate is used at all. */
export const DECODE_MIN_SAMPLES = 3;
/** A rate not confirmed by any answer for this long is forgotten (the node's load or model changed). */
export const DECODE_RATE_TTL_MS = 60 * 60_000;
/** How far one answer pulls the learned figures towards itself. */
export const DECODE_WEIGHT = 0.2;
/** A published rate changes only when it or the first token's time moves by more than this share. */
export const DECODE_PUBLISH_CHANGE = 0.05;

/** Pure: the figures after one more answer; `prior` unchanged for an answer that teaches nothing. */
export function observeDecode(prior: DecodeRate | undefined, sample: DecodeSample, nowMs: number): DecodeRate | undefined {
  const firstTokenMs =
    sample.firstTokenMs !== undefined && Number.isFinite(sample.firstTokenMs) && sample.firstTokenMs >= 0
      ? sample.firstTokenMs
      : undefined;
  if (
    !(sample.tokens >= DECODE_MIN_TOKENS) ||
    !(sample.decodeMs >= DECODE_MIN_MS) ||
    !Number.isFinite(sample.tokens + sample.decodeMs)
  )
    return prior;
  // A burst faster than any node generates is counted as the fastest: it cannot inflate the rate past it.
  const decodeMs = Math.max(sample.decodeMs, (sample.tokens * 1000) / DECODE_MAX_TOKENS_PER_SECOND);
  const live = prior === undefined || nowMs - prior.atMs >= DECODE_RATE_TTL_MS ? undefined : prior;
  if (live === undefined) return { tokens: sample.tokens, decodeMs, firstTokenMs, samples: 1, atMs: nowMs };
  const keep = 1 - DECODE_WEIGHT;
  return {
    tokens: live.tokens * keep + sample.tokens,
    decodeMs: live.decodeMs * keep + decodeMs,
    firstTokenMs:
      firstTokenMs === undefined
        ? live.firstTokenMs
        : live.firstTokenMs === undefined
          ? firstTokenMs
          : live.firstTokenMs * keep + firstTokenMs * DECODE_WEIGHT,
    samples: Math.min(live.samples + 1, 1_000_000),
    atMs: nowMs,
  };
}

/** Pure: the figures if they may be used at `nowMs` (enough answers, recent enough), else undefined. */
export function usableDecode(rate: DecodeRate | undefined, nowMs: number): DecodeRate | undefined {
  if (rate === undefined || rate.samples < DECODE_MIN_SAMPLES || nowMs - rate.atMs >= DECODE_RATE_TTL_MS) return undefined;
  return rate;
}

/** Tokens per second of a learned rate. */
export function tokensPerSecond(rate: Pick<DecodeRate, 'tokens' | 'decodeMs'>): number {
  return rate.decodeMs > 0 ? (rate.tokens * 1000) / rate.decodeMs : 0;
}

/** Pure: whether `next` differs enough from the published `prior` to publish it (a new view). */
export function decodeChanged(prior: DecodeRate | undefined, next: DecodeRate | undefined): boolean {
  if (prior === undefined || next === undefined) return prior !== next;
  if (prior.samples >= DECODE_MIN_SAMPLES !== next.samples >= DECODE_MIN_SAMPLES) return true;
  const moved = (a: number | undefined, b: number | undefined): boolean =>
    a === undefined || b === undefined ? a !== b : Math.abs(a - b) > a * DECODE_PUBLISH_CHANGE;
  // Refreshed now and then, so a published rate does not expire while answers keep coming.
  return (
    moved(tokensPerSecond(prior), tokensPerSecond(next)) ||
    moved(prior.firstTokenMs, next.firstTokenMs) ||
    next.atMs - prior.atMs >= DECODE_RATE_TTL_MS / 4
  );
}

/** Models per node whose rate is learned (a node lists a bounded number; this bounds the rest). */
export const MAX_LEARNED_DECODES = 1024;

/** The rule a node's record learns its rates by (nodes/learned-figures.ts): bound, step, and when to publish. */
export const DECODE_RATE_LEARNING = { maxModels: MAX_LEARNED_DECODES, observe: observeDecode, changed: decodeChanged } as const;
