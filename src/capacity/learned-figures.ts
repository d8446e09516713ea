// What a node's answers teach, per model: its bytes per prompt token (what the prompt-size bounds
// tighten with) and how fast it generates tokens (what a client that left is charged for). Each is a
// learned figure: the pure rule for how one answer moves it, when it may be used and when it changed
// enough to publish (below: the token ratio, the decode rate), and the holder a node's record keeps
// (`LearnedFigures`: the figure every answer moves, and the one its view shows, published only when
// it changed enough, so views stay cached). The holder is part of the registry's record of a node
// (nodes/node-runtime.ts) and is written only through its own `learn`: nothing here reaches into
// the registry's state.

/** The pure rules for one kind of learned figure. */
export interface LearningRule<Figure, Sample> {
  /** Models learned at most per node (a node lists a bounded number; this bounds the rest). */
  readonly maxModels: number;
  /** The figure after one more answer; `prior` itself for an answer that teaches nothing. */
  readonly observe: (prior: Figure | undefined, sample: Sample, nowMs: number) => Figure | undefined;
  /** Whether `next` differs enough from the published figure to publish it. */
  readonly changed: (published: Figure | undefined, next: Figure) => boolean;
}

/** What a node that has taught nothing publishes: one object for every node (most nodes of a large fleet). */
const NOTHING: Readonly<Record<string, never>> = Object.freeze({});

export class LearnedFigures<Figure, Sample> {
  readonly #rule: LearningRule<Figure, Sample>;
  /** Made by the first answer that teaches something: a node that never answers keeps none (two a node, 1,000s of nodes). */
  #learned: Map<string, Figure> | undefined;
  #published: Readonly<Record<string, Figure>> = NOTHING;

  constructor(rule: LearningRule<Figure, Sample>) {
    this.#rule = rule;
  }

  /** The figures as last published: the same object until one changes (what the view shows). */
  get published(): Readonly<Record<string, Figure>> {
    return this.#published;
  }

  /** Learns one answer for `model`; true when the published figure changed (the view must be rebuilt). */
  learn(model: string, sample: Sample, nowMs: number): boolean {
    const prior = this.#learned?.get(model);
    if (prior === undefined && (this.#learned?.size ?? 0) >= this.#rule.maxModels) return false;
    const next = this.#rule.observe(prior, sample, nowMs);
    if (next === undefined || next === prior) return false;
    this.#learned ??= new Map<string, Figure>();
    this.#learned.set(model, next);
    if (!this.#rule.changed(this.#published[model], next)) return false;
    this.#published = { ...this.#published, [model]: next };
    return true;
  }
}

// ---- the token ratio ----
// Pure: how many UTF-8 bytes of prompt text one token of a node's tokenizer covers for a model,
// learned from its answers (`usage.prompt_tokens` against the prompt's bytes). Kept as an envelope
// (the lowest and highest ratio seen lately), bounded to [1, MAX_BYTES_PER_TOKEN], moving back
// towards recent answers with every new one, and forgotten when no answer came for TOKEN_RATIO_TTL_MS.
// The prompt-size bounds (src/proxy/request/prompt-size.ts) use it, with a safety factor, to tighten what
// bytes alone can prove.

/**
 * The most UTF-8 bytes any one token covers, for any tokenizer we may meet: a true lower bound on a
 * prompt's tokens is its bytes divided by this. The longest tokens of the published BPE and
 * SentencePiece vocabularies (GPT-2, cl100k/o200k and their derivatives Llama 3 and Qwen 2,
 * Mistral, Gemma, DeepSeek) are runs of spaces, dashes or `=` well under 128 bytes; 256 leaves a
 * factor of two for vocabularies we have not seen.
 */
export const MAX_BYTES_PER_TOKEN = 256;

/** Answers to shorter prompts say more about the template than about the tokenizer: not learned from. */
export const TOKEN_RATIO_MIN_PROMPT_BYTES = 256;
/** Answers needed before the ratio is used at all. */
export const TOKEN_RATIO_MIN_SAMPLES = 8;
/** A ratio not confirmed by any answer for this long is forgotten (a new model under an old name). */
export const TOKEN_RATIO_TTL_MS = 60 * 60_000;
/** How far one answer pulls a widened envelope back towards itself (a new extreme widens it at once). */
export const TOKEN_RATIO_WEIGHT = 0.05;
/** A published ratio changes only when an edge moves by more than this share (views stay cached). */
export const TOKEN_RATIO_PUBLISH_CHANGE = 0.02;

export interface TokenRatio {
  /** Fewest bytes per token seen lately (counting the template's tokens too: errs low). */
  readonly low: number;
  /** Most bytes per token seen lately (the template's allowance taken off: errs high). */
  readonly high: number;
  readonly samples: number;
  /** When the last answer was learned from (epoch ms). */
  readonly atMs: number;
}

export interface RatioSample {
  /** UTF-8 bytes of the prompt's text pieces. */
  readonly bytes: number;
  /** What the node's answer said: `usage.prompt_tokens`. */
  readonly promptTokens: number;
  /** The gateway's generous allowance for template tokens (role headers, end markers). */
  readonly templateTokens: number;
}

function clampRatio(ratio: number): number {
  return Math.min(MAX_BYTES_PER_TOKEN, Math.max(1, ratio));
}

/** Pure: the envelope after one more answer; `prior` unchanged for an answer that teaches nothing. */
export function observeRatio(prior: TokenRatio | undefined, sample: RatioSample, nowMs: number): TokenRatio | undefined {
  if (sample.bytes < TOKEN_RATIO_MIN_PROMPT_BYTES || !(sample.promptTokens > 0)) return prior;
  const low = clampRatio(sample.bytes / sample.promptTokens);
  const high = clampRatio(sample.bytes / Math.max(1, sample.promptTokens - sample.templateTokens));
  const live = prior === undefined || nowMs - prior.atMs >= TOKEN_RATIO_TTL_MS ? undefined : prior;
  if (live === undefined) return { low, high, samples: 1, atMs: nowMs };
  return {
    low: low <= live.low ? low : live.low + (low - live.low) * TOKEN_RATIO_WEIGHT,
    high: high >= live.high ? high : live.high + (high - live.high) * TOKEN_RATIO_WEIGHT,
    samples: Math.min(live.samples + 1, 1_000_000),
    atMs: nowMs,
  };
}

/** Pure: the envelope if it may be used at `nowMs` (enough answers, recent enough), else undefined. */
export function usableRatio(ratio: TokenRatio | undefined, nowMs: number): TokenRatio | undefined {
  if (ratio === undefined || ratio.samples < TOKEN_RATIO_MIN_SAMPLES || nowMs - ratio.atMs >= TOKEN_RATIO_TTL_MS)
    return undefined;
  return ratio;
}

/** Pure: whether `next` differs enough from the published `prior` to publish it (a new view for routing). */
export function ratioChanged(prior: TokenRatio | undefined, next: TokenRatio | undefined): boolean {
  if (prior === undefined || next === undefined) return prior !== next;
  if (prior.samples >= TOKEN_RATIO_MIN_SAMPLES !== next.samples >= TOKEN_RATIO_MIN_SAMPLES) return true;
  const moved = (a: number, b: number): boolean => Math.abs(a - b) > a * TOKEN_RATIO_PUBLISH_CHANGE;
  // Refreshed now and then, so a published envelope does not expire while answers keep coming.
  return moved(prior.low, next.low) || moved(prior.high, next.high) || next.atMs - prior.atMs >= TOKEN_RATIO_TTL_MS / 4;
}

/** Pure: the widest usable envelope among several nodes' (the most cautious bounds); undefined = none usable. */
export function widestRatio(ratios: Iterable<TokenRatio | undefined>, nowMs: number): TokenRatio | undefined {
  let widest: TokenRatio | undefined;
  for (const candidate of ratios) widest = widen(widest, usableRatio(candidate, nowMs));
  return widest;
}

/** The envelope spanning both (either may be none). */
function widen(widest: TokenRatio | undefined, ratio: TokenRatio | undefined): TokenRatio | undefined {
  if (ratio === undefined) return widest;
  if (widest === undefined) return ratio;
  return {
    low: Math.min(widest.low, ratio.low),
    high: Math.max(widest.high, ratio.high),
    samples: widest.samples + ratio.samples,
    atMs: Math.max(widest.atMs, ratio.atMs),
  };
}

/** What fleetRatio reads of a node view. */
export interface RatioView {
  readonly modelsById: ReadonlyMap<string, unknown>;
  readonly tokenRatios?: Readonly<Record<string, TokenRatio>>;
}

/** Pure: the widest usable envelope among the nodes that list `model` (what a request's bounds use). */
export function fleetRatio(views: readonly RatioView[], model: string, nowMs: number): TokenRatio | undefined {
  // One pass, no arrays built: every request asks, over every node.
  let widest: TokenRatio | undefined;
  for (let i = 0; i < views.length; i += 1) {
    const view = views[i] as RatioView;
    if (view.modelsById.has(model)) widest = widen(widest, usableRatio(view.tokenRatios?.[model], nowMs));
  }
  return widest;
}

/** Models per node whose ratio is learned (a node lists a bounded number; this bounds the rest). */
export const MAX_LEARNED_RATIOS = 1024;

/** The rule a node's record learns its ratios by (LearnedFigures): bound, step, and when to publish. */
export const TOKEN_RATIO_LEARNING = { maxModels: MAX_LEARNED_RATIOS, observe: observeRatio, changed: ratioChanged } as const;

// ---- the decode rate ----
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

/** The rule a node's record learns its rates by (LearnedFigures): bound, step, and when to publish. */
export const DECODE_RATE_LEARNING = { maxModels: MAX_LEARNED_DECODES, observe: observeDecode, changed: decodeChanged } as const;
