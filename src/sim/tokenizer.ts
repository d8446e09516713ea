// The simulated tokenizer: deterministic, cheap, and documented exactly (docs/simulator.md) so the
// gateway's estimator can bound it from above. Every sim endpoint (/tokenize, usage, context checks)
// counts with these functions and nothing else.
//
// Rules:
// - a run of letters (\p{L}, \p{M}) costs ceil(length / 4) tokens, counted in code points, except
//   for the CJK scripts (Han, Hiragana, Katakana, Hangul): each of their characters is one token, as
//   real tokenizers count them (about 1 token per character, 3 UTF-8 bytes);
// - every other non-whitespace code point (digits, punctuation, symbols, emoji) is one token;
// - whitespace is free: it is glued to the front of the next piece (trailing whitespace to the last).
// Hence countTokens(text) <= the number of non-whitespace code points <= text.length.

import { isRecord } from '#src/core/is-record.ts';

const LETTERS_PER_TOKEN = 4;
const PIECE_PATTERN =
  /(\s+)|((?:(?![\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}])[\p{L}\p{M}])+)|([\s\S])/gu;

/** Splits text into token pieces; joining the pieces gives the text back (unless it is all whitespace). */
export function tokenize(text: string): string[] {
  const pieces: string[] = [];
  let pendingSpace = '';
  for (const match of text.matchAll(PIECE_PATTERN)) {
    const [, space, letters, single] = match;
    if (space !== undefined) {
      pendingSpace += space;
    } else if (letters !== undefined) {
      const codePoints = Array.from(letters);
      for (let i = 0; i < codePoints.length; i += LETTERS_PER_TOKEN) {
        pieces.push(pendingSpace + codePoints.slice(i, i + LETTERS_PER_TOKEN).join(''));
        pendingSpace = '';
      }
    } else if (single !== undefined) {
      pieces.push(pendingSpace + single);
      pendingSpace = '';
    }
  }
  const last = pieces.length - 1;
  if (pendingSpace !== '' && last >= 0) pieces[last] = `${pieces[last] ?? ''}${pendingSpace}`;
  return pieces;
}

export function countTokens(text: string): number {
  return tokenize(text).length;
}

const VOCAB_SIZE = 32_000;
const FIRST_ORDINARY_ID = 100;

/** A stable id for a piece (FNV-1a over its UTF-16 units), in [100, 32000). */
export function tokenId(piece: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < piece.length; i++) {
    hash ^= piece.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return FIRST_ORDINARY_ID + (hash % (VOCAB_SIZE - FIRST_ORDINARY_ID));
}

export function tokenIds(text: string): number[] {
  return tokenize(text).map(tokenId);
}

/** Tokens the chat template adds around each message (role header and end marker). */
export const CHAT_TOKENS_PER_MESSAGE = 4;
/** Tokens the chat template adds once, to open the assistant's reply. */
export const CHAT_TOKENS_PER_PROMPT = 3;

function stringTokens(value: unknown): number {
  return typeof value === 'string' ? countTokens(value) : 0;
}

/** Tokens of a message's `content`: a string, or an array of parts whose string `text` counts. */
export function contentTokens(content: unknown): number {
  if (typeof content === 'string') return countTokens(content);
  if (!Array.isArray(content)) return 0;
  let total = 0;
  for (const part of content) {
    if (typeof part === 'string') total += countTokens(part);
    else if (isRecord(part)) total += stringTokens(part['text']);
  }
  return total;
}

function toolCallTokens(toolCalls: unknown): number {
  if (!Array.isArray(toolCalls)) return 0;
  let total = 0;
  for (const call of toolCalls) {
    if (!isRecord(call)) continue;
    const fn = call['function'];
    if (isRecord(fn)) total += stringTokens(fn['name']) + stringTokens(fn['arguments']);
  }
  return total;
}

/**
 * Prompt tokens of a chat request's `messages`: 3 once, plus per message 4 + its content tokens +
 * its `name` + its `tool_calls[].function.name/arguments`. Not an array: 0.
 */
export function chatPromptTokens(messages: unknown): number {
  if (!Array.isArray(messages)) return 0;
  let total = CHAT_TOKENS_PER_PROMPT;
  for (const message of messages) {
    total += CHAT_TOKENS_PER_MESSAGE;
    if (!isRecord(message)) continue;
    total += contentTokens(message['content']) + stringTokens(message['name']);
    total += toolCallTokens(message['tool_calls']);
  }
  return total;
}

/**
 * Prompt tokens of a completions `prompt` (or an embeddings `input`): a string counts its tokens,
 * an array of numbers counts one per number, an array sums its elements by these rules.
 */
export function textPromptTokens(prompt: unknown): number {
  if (typeof prompt === 'string') return countTokens(prompt);
  if (typeof prompt === 'number') return 1;
  if (!Array.isArray(prompt)) return 0;
  let total = 0;
  for (const element of prompt) total += textPromptTokens(element);
  return total;
}

/**
 * Prompt tokens of an Anthropic Messages request: `system` (a string, or text blocks) counts as a
 * system message, then the messages (string content, or blocks whose `text` counts), as the servers
 * render them through the chat template.
 */
export function anthropicPromptTokens(system: unknown, messages: unknown): number {
  const all: unknown[] = [];
  if (typeof system === 'string' || Array.isArray(system)) all.push({ role: 'system', content: system });
  if (Array.isArray(messages)) all.push(...messages);
  return chatPromptTokens(all);
}

/**
 * Prompt tokens of a Responses API request: `instructions` counts as a system message and `input`
 * as a user message (a string) or as the messages themselves (an array of {role, content}).
 */
export function responsesPromptTokens(input: unknown, instructions: unknown): number {
  const messages: unknown[] = [];
  if (typeof instructions === 'string') messages.push({ role: 'system', content: instructions });
  if (typeof input === 'string') messages.push({ role: 'user', content: input });
  else if (Array.isArray(input)) messages.push(...input);
  return chatPromptTokens(messages);
}
