// Pure: how many tokens a request's prompt can be, without a tokenizer.
//
// The estimator: every token of a byte-level BPE or SentencePiece(+byte fallback) tokenizer covers
// at least one UTF-8 byte, so a text's token count never exceeds its byte length. Chat templates add
// role headers and end markers; we allow TEMPLATE_TOKENS_PER_MESSAGE per message plus
// TEMPLATE_TOKENS_PER_PROMPT once, more than common templates use. So
//   upperBound = Σ utf8Bytes(text pieces) + 8 × messages + 16
// is an upper bound on what a server will count, with no tokenizer at hand. It is loose (English
// runs near 4 bytes per token): prompt-bounds.ts pairs it with a proven lower bound and tightens
// both with what the fleet's answers taught, and the node's own tokenizer is asked when it matters.

import { ctxFor, lastKnownCtx, residencyOf } from '#src/capacity/index.ts';
import type { NodeView } from '#src/nodes/index.ts';
import { isRecord } from '#src/core/is-record.ts';
import { COUNTED_AS, isAnthropicPath } from '#src/config/index.ts';
import { anthropicPromptPieces } from './anthropic-prompt.ts';
import { isRerankOrScore, longestPairPieces } from './pair-prompt.ts';

export const TEMPLATE_TOKENS_PER_MESSAGE = 8;
export const TEMPLATE_TOKENS_PER_PROMPT = 16;

export interface PromptText {
  /** The text pieces a tokenizer would see (message contents, names, tool arguments, prompts). */
  readonly pieces: readonly string[];
  readonly messages: number;
  /** Token-id arrays given directly (completions/embeddings) count one token per id. */
  readonly givenTokens: number;
}

function collectContent(content: unknown, pieces: string[]): void {
  if (typeof content === 'string') pieces.push(content);
  else if (Array.isArray(content)) {
    for (let i = 0; i < content.length; i += 1) {
      const part: unknown = content[i];
      if (typeof part === 'string') pieces.push(part);
      else if (isRecord(part) && typeof part.text === 'string') pieces.push(part.text);
    }
  }
}

function collectMessages(messages: unknown, pieces: string[]): number {
  if (!Array.isArray(messages)) return 0;
  // Indexed loops here and below: no iterator and result objects per element while the code is cold.
  for (let i = 0; i < messages.length; i += 1) {
    const message: unknown = messages[i];
    if (!isRecord(message)) continue;
    collectContent(message.content, pieces);
    if (typeof message.name === 'string') pieces.push(message.name);
    if (Array.isArray(message.tool_calls)) {
      for (const call of message.tool_calls) {
        const fn = isRecord(call) ? call.function : undefined;
        if (isRecord(fn)) {
          if (typeof fn.name === 'string') pieces.push(fn.name);
          if (typeof fn.arguments === 'string') pieces.push(fn.arguments);
        }
      }
    }
  }
  return messages.length;
}

/** Strings and token-id arrays of a completions `prompt` or an embeddings `input`. */
function collectPrompt(prompt: unknown, pieces: string[]): number {
  if (typeof prompt === 'string') {
    pieces.push(prompt);
    return 0;
  }
  if (typeof prompt === 'number') return 1;
  if (!Array.isArray(prompt)) return 0;
  let given = 0;
  for (const element of prompt) given += collectPrompt(element, pieces);
  return given;
}

export function promptText(counted: string, json: Readonly<Record<string, unknown>>): PromptText {
  // A count (`…/input_tokens`) sizes the body of the endpoint it counts for.
  const endpoint = COUNTED_AS[counted] ?? counted;
  const pieces: string[] = [];
  let messages = 0;
  let givenTokens = 0;
  if (endpoint === '/v1/chat/completions' || endpoint === '/api/chat') {
    messages = collectMessages(json.messages, pieces);
    if (Array.isArray(json.tools)) pieces.push(JSON.stringify(json.tools));
  } else if (endpoint === '/v1/completions') {
    givenTokens = collectPrompt(json.prompt, pieces);
  } else if (endpoint === '/v1/embeddings' || endpoint === '/api/embed') {
    givenTokens = collectPrompt(json.input, pieces);
  } else if (endpoint === '/api/generate') {
    // Ollama's generate: `system` and `prompt` (its template wraps them: counted as two messages).
    if (typeof json.system === 'string') pieces.push(json.system);
    if (typeof json.prompt === 'string') pieces.push(json.prompt);
    messages = pieces.length;
  } else if (endpoint === '/api/embeddings') {
    givenTokens = collectPrompt(json.prompt, pieces);
  } else if (endpoint === '/v1/responses') {
    if (typeof json.instructions === 'string') {
      pieces.push(json.instructions);
      messages += 1;
    }
    if (typeof json.input === 'string') {
      pieces.push(json.input);
      messages += 1;
    } else {
      messages += collectMessages(json.input, pieces);
    }
  } else if (isAnthropicPath(endpoint)) {
    messages = anthropicPromptPieces(json, pieces);
  } else if (isRerankOrScore(endpoint)) {
    messages = longestPairPieces(json, pieces);
  }
  return { pieces, messages, givenTokens };
}

export function templateTokens(text: PromptText): number {
  return text.messages > 0 ? TEMPLATE_TOKENS_PER_PROMPT + TEMPLATE_TOKENS_PER_MESSAGE * text.messages : 0;
}

export function upperBoundTokens(text: PromptText): number {
  let bytes = 0;
  for (let i = 0; i < text.pieces.length; i += 1) bytes += Buffer.byteLength(text.pieces[i] as string, 'utf8');
  return bytes + text.givenTokens + templateTokens(text);
}

/**
 * The answer size the request asks for: max_tokens, max_completion_tokens or max_output_tokens;
 * Ollama's native API names it `options.num_predict` (negative there = unbounded: none asked).
 */
export function requestedMaxTokens(json: Readonly<Record<string, unknown>>): number | undefined {
  // The three keys read in place, in this order: no list of them (and its iterator) per request.
  const asked =
    answerSize(json['max_completion_tokens']) ?? answerSize(json['max_tokens']) ?? answerSize(json['max_output_tokens']);
  if (asked !== undefined) return asked;
  const options = json.options;
  if (
    isRecord(options) &&
    typeof options.num_predict === 'number' &&
    Number.isInteger(options.num_predict) &&
    options.num_predict > 0
  )
    return options.num_predict;
  return undefined;
}

/** A positive integer answer size, else undefined. */
function answerSize(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : undefined;
}

/** The endpoints whose requests may ask for several answers (`n`, `best_of`). */
const CHOICE_ENDPOINTS: ReadonlySet<string> = new Set(['/v1/chat/completions', '/v1/completions']);

/**
 * The answers the request asks the node to generate, each up to max_tokens: OpenAI's `n` (chat and
 * completions: that many choices) and `best_of` (completions, vLLM: that many generated, the best
 * `n` returned), whichever is larger; 1 when neither is a larger integer. Anthropic's Messages, the
 * Responses API, embeddings and Ollama's native API have no such field (a stray one is not read
 * by their servers either): always 1.
 */
export function requestedChoices(endpoint: string, json: Readonly<Record<string, unknown>>): number {
  if (!CHOICE_ENDPOINTS.has(endpoint)) return 1;
  // The two keys read in place: no list of them (and its iterator) per call, twice per attempt.
  return Math.max(choiceCount(json['n']), choiceCount(json['best_of']));
}

/** A valid `n` or `best_of` above one, else one. */
function choiceCount(value: unknown): number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 1 ? value : 1;
}

/**
 * The exact count is worth a round trip to a node's tokenizer when the upper bound (with the answer)
 * takes more than an eighth of the smallest known context among nodes serving the model: then it
 * may decide where the prompt fits, or hold back a shared KV budget far beyond what it really uses.
 */
export const EXACT_COUNT_CONTEXT_FRACTION = 1 / 8;

/**
 * A typical size (4 UTF-8 bytes per token, English-like text): a guess, never proof. Remote sites
 * are judged by it when no tokenizer counted (docs/federation-forwarding.md).
 */
export function typicalTokens(text: PromptText): number {
  let bytes = 0;
  for (const piece of text.pieces) bytes += Buffer.byteLength(piece, 'utf8');
  return Math.ceil(bytes / 4) + text.givenTokens + templateTokens(text);
}

export function wantsExactCount(
  upperBound: number,
  maxTokens: number | undefined,
  nodes: readonly NodeView[],
  model: string,
): boolean {
  let smallest = Infinity;
  for (let i = 0; i < nodes.length; i += 1) {
    const node = nodes[i] as NodeView;
    const listed = node.facts?.models.get(model);
    const residency = (listed?.residency ?? residencyOf(node, model)).state;
    if (residency === 'absent') continue;
    const ctx = residency === 'loaded' ? (listed?.ctx ?? ctxFor(node, model)) : lastKnownCtx(node, model);
    if (ctx > 0) smallest = Math.min(smallest, ctx);
  }
  return Number.isFinite(smallest) && upperBound + Math.max(1, maxTokens ?? 1) > smallest * EXACT_COUNT_CONTEXT_FRACTION;
}

/** Whether chat messages or a responses input carry parts without text (image_url, input_audio, …). */
export function hasUncountedParts(json: Readonly<Record<string, unknown>>): boolean {
  return listHasUncountedParts(json.messages) || listHasUncountedParts(json.input);
}

function listHasUncountedParts(list: unknown): boolean {
  if (!Array.isArray(list)) return false;
  for (let i = 0; i < list.length; i += 1) {
    const item: unknown = list[i];
    if (!isRecord(item)) continue;
    if (item.type !== undefined && item.type !== 'message' && typeof item.text !== 'string') return true;
    const content = item.content;
    if (!Array.isArray(content)) continue;
    for (const part of content) if (isRecord(part) && typeof part.text !== 'string') return true;
  }
  return false;
}
