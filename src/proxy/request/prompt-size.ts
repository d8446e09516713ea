// How big a request's prompt is, as far as the gateway can tell before routing, and what it asks
// to generate: proven bounds from its bytes, tightened by the bytes-per-token ratio the fleet's
// answers taught, collapsed by the node's own tokenizer when the bounds are too far apart to decide
// where it fits (or whether it fits at all). One concept, in its parts: the estimator (pure), the
// bounds (pure), the tokenizer's count (I/O), and sizePrompt, which the in-thread gateway and every
// request worker run, with what an answer teaches back (prompt-bounds.ts, size-prompt.ts and
// exact-tokens.ts were carved from it by the old line cap).

import type { Dispatcher } from 'undici';
import {
  ctxFor,
  fleetRatio,
  lastKnownCtx,
  MAX_BYTES_PER_TOKEN,
  residencyOf,
  type RatioSample,
  type TokenRatio,
} from '#src/capacity/index.ts';
import { requestBoundedJson } from '#src/core/bounded-json.ts';
import { appended } from '#src/core/appended.ts';
import { isRecord } from '#src/core/is-record.ts';
import { COUNTED_AS, isAnthropicPath } from '#src/config/index.ts';
import { tokenizerFor, truncatesSilently, type TokenizeDialect } from '#src/kinds/index.ts';
import type { NodeRegistry, NodeView, RoutingSnapshot } from '#src/nodes/index.ts';
import { largestContext } from '#src/routing/index.ts';
import { anthropicPromptPieces } from './anthropic-prompt.ts';
import { isRerankOrScore, longestPairPieces } from './pair-prompt.ts';

// ---- The estimator ---------------------------------------------------------------------------
//
// Pure: how many tokens a request's prompt can be, without a tokenizer.
//
// The estimator: every token of a byte-level BPE or SentencePiece(+byte fallback) tokenizer covers
// at least one UTF-8 byte, so a text's token count never exceeds its byte length. Chat templates add
// role headers and end markers; we allow TEMPLATE_TOKENS_PER_MESSAGE per message plus
// TEMPLATE_TOKENS_PER_PROMPT once, more than common templates use. So
//   upperBound = Σ utf8Bytes(text pieces) + 8 × messages + 16
// is an upper bound on what a server will count, with no tokenizer at hand. It is loose (English
// runs near 4 bytes per token): the bounds below pair it with a proven lower bound and tighten
// both with what the fleet's answers taught, and the node's own tokenizer is asked when it matters.

export const TEMPLATE_TOKENS_PER_MESSAGE = 8;
export const TEMPLATE_TOKENS_PER_PROMPT = 16;

export interface PromptText {
  /** The text pieces a tokenizer would see (message contents, names, tool arguments, prompts). */
  readonly pieces: readonly string[];
  readonly messages: number;
  /** Token-id arrays given directly (completions/embeddings) count one token per id. */
  readonly givenTokens: number;
}

/** Where a prompt's text pieces are collected (anthropic-prompt.ts and pair-prompt.ts push into one too). */
interface PieceSink {
  push(piece: string): unknown;
}

/**
 * A prompt's pieces as they are found: most prompts have one or two, so the list is made with the
 * first (core/appended.ts: an empty list's first push reserves seventeen slots), and a request
 * reads its prompt twice (its size, and what its answer teaches).
 */
class Pieces implements PieceSink {
  list: string[] | undefined;

  constructor() {
    this.list = undefined;
  }

  push(piece: string): void {
    this.list = appended(this.list, piece);
  }
}

/** A prompt with no text (a body without one): one list for them all. */
const NO_PIECES: readonly string[] = Object.freeze([]);

function collectContent(content: unknown, pieces: PieceSink): void {
  if (typeof content === 'string') pieces.push(content);
  else if (Array.isArray(content)) {
    for (let i = 0; i < content.length; i += 1) {
      const part: unknown = content[i];
      if (typeof part === 'string') pieces.push(part);
      else if (isRecord(part) && typeof part.text === 'string') pieces.push(part.text);
    }
  }
}

function collectMessages(messages: unknown, pieces: PieceSink): number {
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
function collectPrompt(prompt: unknown, pieces: PieceSink): number {
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
  const pieces = new Pieces();
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
    messages = pieces.list?.length ?? 0;
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
  return { pieces: pieces.list ?? NO_PIECES, messages, givenTokens };
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

// ---- The bounds ------------------------------------------------------------------------------
//
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

// ---- The tokenizer's count -------------------------------------------------------------------
//
// I/O: an exact prompt size from a node's own tokenizer, when the cheap upper bound is too close to
// a context limit to decide. Asked only of a node that has the model loaded (a llama-server router
// would load it otherwise; its kind's request guards that too). Bounded in time; undefined on failure.

const MAX_TOKENIZE_ANSWER_BYTES = 8 * 1024 * 1024;

function dialectOf(node: NodeView): TokenizeDialect | undefined {
  return tokenizerFor(node.spec.kind, node.capacity.role);
}

/** Pure: the node to ask — healthy, has the model loaded, and has a tokenizer request we know. */
export function pickTokenizerNode(nodes: readonly NodeView[], model: string): NodeView | undefined {
  return nodes.find(
    (n) =>
      n.health.status !== 'dead' &&
      n.discovery.phase !== 'untried' &&
      residencyOf(n, model).state === 'loaded' &&
      dialectOf(n) !== undefined,
  );
}

export async function countPromptTokens(
  node: NodeView,
  model: string,
  text: PromptText,
  options: { readonly dispatcher: Dispatcher; readonly timeoutMs: number; readonly signal?: AbortSignal },
): Promise<number | undefined> {
  const dialect = dialectOf(node);
  if (dialect === undefined) return undefined;
  const request = dialect.request(model, text.pieces.join('\n'));
  const answer = await requestBoundedJson(`${node.spec.url}${request.path}`, {
    dispatcher: options.dispatcher,
    method: 'POST',
    body: JSON.stringify(request.body),
    headers: node.spec.apiKey === undefined ? {} : { authorization: `Bearer ${node.spec.apiKey}` },
    timeoutMs: options.timeoutMs,
    maxBytes: MAX_TOKENIZE_ANSWER_BYTES,
    signal: options.signal,
  });
  if (!answer.ok || answer.status !== 200) return undefined;
  const count = dialect.count(answer.body);
  return count === undefined ? undefined : count + text.givenTokens + templateTokens(text);
}

// ---- Sizing a request, and what an answer teaches --------------------------------------------
//
// The three parts together: the bounds at once, a node's tokenizer asked only when they are too far
// apart to decide. The in-thread gateway and every request worker run this same function; a node's
// answer teaches the fleet's ratio back.

/** The request path's own deps satisfy these as they are: nothing is built per request to size it. */
export interface SizingDeps {
  /** The fleet-view port (its views and snapshot). */
  readonly fleet: {
    readonly views: () => readonly NodeView[];
    /** The views that may serve a model (the fleet-view port's; without it, every view). */
    readonly offering?: (model: string) => readonly NodeView[];
    readonly snapshot: () => RoutingSnapshot;
  };
  /** The node's connection pool, which also carries its tokenizer call. */
  readonly pools: { get(node: NodeView['spec']): Dispatcher };
}

/** Pure: whether asking a tokenizer cannot change the verdict: even the proven lower bound exceeds every context. */
export function tokenizerIsMoot(bounds: PromptBounds, answerTokens: number, largest: number): boolean {
  return largest > 0 && bounds.lower + answerTokens > largest;
}

export interface SizingAsk {
  readonly endpoint: string;
  readonly model: string;
  readonly json: Readonly<Record<string, unknown>>;
  readonly maxTokens: number | undefined;
  readonly nowMs: number;
  readonly tokenizeTimeoutMs: number;
}

/**
 * The prompt's bounds: at once (no promise, no turn of the event loop) unless a node's tokenizer
 * is asked, which only bounds too far apart to decide need.
 */
export function sizePrompt(deps: SizingDeps, ask: SizingAsk, signal: AbortSignal): PromptBounds | Promise<PromptBounds> {
  const text = promptText(ask.endpoint, ask.json);
  // Only the nodes that may serve the model: the others would be skipped, one by one, every request.
  const nodes = deps.fleet.offering?.(ask.model) ?? deps.fleet.views();
  const bounds = promptBounds(text, fleetRatio(nodes, ask.model, ask.nowMs), textBytes(text));
  if (!wantsExactCount(bounds.upper, ask.maxTokens, nodes, ask.model)) return bounds;
  if (tokenizerIsMoot(bounds, Math.max(1, ask.maxTokens ?? 1), largestContext(deps.fleet.snapshot(), ask.model))) return bounds;
  const tokenizer = pickTokenizerNode(nodes, ask.model);
  if (tokenizer === undefined) return bounds;
  return countedBounds(deps, ask, signal, { tokenizer, text, bounds });
}

/** The bounds collapsed by `tokenizer`'s count of the prompt (the proven bounds when it gives none). */
async function countedBounds(
  deps: SizingDeps,
  ask: SizingAsk,
  signal: AbortSignal,
  c: { readonly tokenizer: NodeView; readonly text: PromptText; readonly bounds: PromptBounds },
): Promise<PromptBounds> {
  const count = await countPromptTokens(c.tokenizer, ask.model, c.text, {
    dispatcher: deps.pools.get(c.tokenizer.spec),
    timeoutMs: ask.tokenizeTimeoutMs,
    signal,
  });
  return count === undefined ? c.bounds : exactBounds(count, c.text, c.bounds);
}

/** A node answered 200 and stated its prompt count: the registry learns its bytes per token (pure sample, then one call). */
export function learnFromAnswer(
  registry: Pick<NodeRegistry, 'learnTokenRatio'>,
  node: NodeView,
  ask: { readonly endpoint: string; readonly model: string; readonly json: Readonly<Record<string, unknown>> },
  promptTokens: number | undefined,
): void {
  if (promptTokens === undefined) return;
  const sample = ratioSample(promptText(ask.endpoint, ask.json), {
    promptTokens,
    uncountedParts: hasUncountedParts(ask.json),
    truncates: node.facts?.truncates ?? truncatesSilently(node.spec.kind, node.capacity.role),
    ctx: node.facts?.models.get(ask.model)?.ctx ?? ctxFor(node, ask.model),
  });
  if (sample !== undefined) registry.learnTokenRatio(node.spec.name, node.spec.url, ask.model, sample);
}
