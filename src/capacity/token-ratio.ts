// Pure: how many UTF-8 bytes of prompt text one token of a node's tokenizer covers for a model,
// learned from its answers (`usage.prompt_tokens` against the prompt's bytes). Kept as an envelope
// (the lowest and highest ratio seen lately), bounded to [1, MAX_BYTES_PER_TOKEN], moving back
// towards recent answers with every new one, and forgotten when no answer came for TOKEN_RATIO_TTL_MS.
// The prompt-size bounds (src/proxy/request/prompt-bounds.ts) use it, with a safety factor, to tighten what
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

/** The rule a node's record learns its ratios by (nodes/learned-figures.ts): bound, step, and when to publish. */
export const TOKEN_RATIO_LEARNING = { maxModels: MAX_LEARNED_RATIOS, observe: observeRatio, changed: ratioChanged } as const;
