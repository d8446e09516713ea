// Pure: what the gateway can prove about a prompt's token count without a tokenizer, and what the
// fleet's answers let it tighten. A refusal needs proof: routing goes where the upper bound fits,
// else to the largest context the lower bound fits, and answers 400 only when the lower bound
// exceeds every context (docs/config.md, "Prompt size").
//
// Proven, for any tokenizer:
//   upper = bytes + given token ids + template allowance   (every token covers at least one byte)
//   lower = ceil(bytes / MAX_BYTES_PER_TOKEN) + given ids   (no token covers more, see token-ratio.ts)
// Learned (the fleet's widest recent bytes-per-token envelope for the model, with LEARNED_SAFETY):
//   upper' = ceil(bytes × LEARNED_SAFETY / low) + given + template
//   lower' = floor(bytes / (high × LEARNED_SAFETY)) + given
// Each bound is the tighter of the two. An exact count (a node's /tokenize) is both bounds.

import { MAX_BYTES_PER_TOKEN, type RatioSample, type TokenRatio } from '#src/capacity/index.ts';
import { templateTokens, type PromptText } from './prompt-size.ts';

/**
 * How far a prompt's own bytes-per-token may stray from the envelope the fleet's recent answers
 * span: twice as dense (code among English) or twice as sparse, and the bounds still hold.
 */
export const LEARNED_SAFETY = 2;

export interface PromptBounds {
  readonly lower: number;
  readonly upper: number;
  /** The bounds come from a tokenizer's count (apart by the template allowance at most). */
  readonly exact: boolean;
  /** Whether the fleet's learned ratio tightened either bound. */
  readonly learned: boolean;
}

export function textBytes(text: PromptText): number {
  let bytes = 0;
  // Indexed: no iterator and result objects per piece while the code is cold.
  for (let i = 0; i < text.pieces.length; i += 1) bytes += Buffer.byteLength(text.pieces[i] as string, 'utf8');
  return bytes;
}

/** The bounds for a prompt of `bytes` text bytes (plus its given ids and template), tightened by `ratio` when known. */
export function promptBounds(text: PromptText, ratio: TokenRatio | undefined, bytes: number = textBytes(text)): PromptBounds {
  const template = templateTokens(text);
  const provenUpper = bytes + text.givenTokens + template;
  const provenLower = Math.ceil(bytes / MAX_BYTES_PER_TOKEN) + text.givenTokens;
  if (ratio === undefined) return { lower: provenLower, upper: provenUpper, exact: false, learned: false };
  const learnedUpper = Math.ceil((bytes * LEARNED_SAFETY) / ratio.low) + text.givenTokens + template;
  const learnedLower = Math.floor(bytes / (ratio.high * LEARNED_SAFETY)) + text.givenTokens;
  const upper = Math.min(provenUpper, learnedUpper);
  const lower = Math.min(upper, Math.max(provenLower, learnedLower));
  return { lower, upper, exact: false, learned: upper < provenUpper || lower > provenLower };
}

/** The bounds of a one-message chat prompt of `bytes` text bytes (what /admin/explain?prompt_bytes= judges). */
export function chatBytesBounds(bytes: number, ratio: TokenRatio | undefined): PromptBounds {
  return promptBounds({ pieces: [], messages: 1, givenTokens: 0 }, ratio, bytes);
}

/**
 * A tokenizer's count of the text (`count`: with the given ids and the template allowance, as
 * countPromptTokens gives it), clamped to what the bytes prove. The template's real size is not
 * known, so the lower bound leaves the allowance out: the two bounds are at most that far apart.
 */
export function exactBounds(count: number, text: PromptText, proven: PromptBounds): PromptBounds {
  const upper = Math.min(count, proven.upper);
  const lower = Math.min(upper, Math.max(proven.lower, upper - templateTokens(text)));
  return { lower, upper, exact: true, learned: false };
}

/**
 * What one answer teaches about the node's tokenizer: its `usage` count against the prompt's bytes.
 * Nothing when the prompt has parts the bytes do not count (images), and — for a node that cuts an
 * overlong prompt silently — nothing unless the prompt surely fit (a cut prompt's count is the cut).
 */
export function ratioSample(
  text: PromptText,
  answer: {
    readonly promptTokens: number | undefined;
    readonly uncountedParts: boolean;
    readonly truncates: boolean;
    readonly ctx: number;
  },
  bytes: number = textBytes(text),
): RatioSample | undefined {
  if (answer.promptTokens === undefined || answer.uncountedParts) return undefined;
  const promptTokens = answer.promptTokens - text.givenTokens;
  if (promptTokens <= 0) return undefined;
  if (answer.truncates && !(answer.ctx > 0 && bytes + text.givenTokens + templateTokens(text) < answer.ctx)) return undefined;
  return { bytes, promptTokens, templateTokens: templateTokens(text) };
}

/** The token figure to quote in a refusal: the count when exact, else the lower bound ("at least"). */
export function refusalFigure(bounds: Pick<PromptBounds, 'lower' | 'upper'>): {
  readonly tokens: number;
  readonly atLeast: boolean;
} {
  return { tokens: bounds.lower, atLeast: bounds.lower < bounds.upper };
}
