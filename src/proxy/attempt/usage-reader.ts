// Pure: the tokens an answer states it used, read in every dialect the gateway passes on, from one
// parsed JSON value (a whole answer, or one event of a stream). One table, one entry per shape:
// adding a dialect's usage is one entry. A field stated later (a later event) wins, as Anthropic's
// `message_delta` restates the output count its `message_start` began. The tally then applies the
// one charging rule of every dialect to what was stated and what was relayed (UsageTally.usage).

import { isRecord } from '#src/core/is-record.ts';
import type { AnswerEnd, AnswerUsage } from './answer-usage.ts';

/** What one value states; a field undefined = not stated there. */
export interface StatedUsage {
  readonly promptTokens: number | undefined;
  readonly completionTokens: number | undefined;
  /** A Responses answer's id (`resp_…`), stated with its usage: what a later `previous_response_id` names. */
  readonly answerId?: string | undefined;
}

type Reader = (value: Readonly<Record<string, unknown>>) => StatedUsage | undefined;

const count = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;

const sum = (...parts: (number | undefined)[]): number | undefined => {
  const stated = parts.filter((p) => p !== undefined);
  return stated.length === 0 ? undefined : stated.reduce((a, b) => a + b, 0);
};

/** `usage` in OpenAI's chat/completions/embeddings shape; an embeddings answer's completion count is its total less its prompt. */
function openAiUsage(usage: Readonly<Record<string, unknown>>): StatedUsage | undefined {
  const prompt = count(usage.prompt_tokens);
  if (prompt === undefined && count(usage.completion_tokens) === undefined) return undefined;
  const total = count(usage.total_tokens);
  const completion =
    count(usage.completion_tokens) ??
    (prompt !== undefined && total !== undefined && total >= prompt ? total - prompt : undefined);
  return { promptTokens: prompt, completionTokens: completion };
}

/** `usage` in the Responses API's and Anthropic's shape; Anthropic counts cached prompt tokens apart. */
function inputOutputUsage(usage: Readonly<Record<string, unknown>>): StatedUsage | undefined {
  const input = count(usage.input_tokens);
  const output = count(usage.output_tokens);
  if (input === undefined && output === undefined) return undefined;
  const prompt =
    input === undefined ? undefined : sum(input, count(usage.cache_creation_input_tokens), count(usage.cache_read_input_tokens));
  return { promptTokens: prompt, completionTokens: output };
}

function usageObject(usage: unknown): StatedUsage | undefined {
  if (!isRecord(usage)) return undefined;
  return openAiUsage(usage) ?? inputOutputUsage(usage);
}

/** llama-server's `timings`: the prompt tokens evaluated plus those taken from its cache, and those predicted. */
function llamaTimings(timings: unknown): StatedUsage | undefined {
  if (!isRecord(timings)) return undefined;
  const predicted = count(timings.predicted_n);
  const prompt = count(timings.prompt_n);
  if (predicted === undefined && prompt === undefined) return undefined;
  return { promptTokens: prompt === undefined ? undefined : prompt + (count(timings.cache_n) ?? 0), completionTokens: predicted };
}

/**
 * Ollama's native API (`/api/chat`, `/api/generate`: the final `done` object, streamed or whole;
 * `/api/embed`: the answer): `prompt_eval_count` prompt tokens, `eval_count` generated ones.
 */
function ollamaNative(value: Readonly<Record<string, unknown>>): StatedUsage | undefined {
  const prompt = count(value.prompt_eval_count);
  const completion = count(value.eval_count);
  if (prompt === undefined && completion === undefined) return undefined;
  return { promptTokens: prompt, completionTokens: completion ?? (value.done === true ? 0 : undefined) };
}

/** A Responses answer (`object: "response"`) with its id: the usage and the id together. */
function withAnswerId(stated: StatedUsage | undefined, response: Readonly<Record<string, unknown>>): StatedUsage | undefined {
  if (stated === undefined || response.object !== 'response' || typeof response.id !== 'string' || response.id === '')
    return stated;
  return { promptTokens: stated.promptTokens, completionTokens: stated.completionTokens, answerId: response.id.slice(0, 512) };
}

/** The dialects, first match wins within one value. */
const READERS: readonly Reader[] = [
  // OpenAI, vLLM, SGLang, Ollama, llama.cpp: a JSON answer, or a stream's usage chunk; the Responses
  // API's (with its id) and Anthropic's JSON answers, and Anthropic's `message_delta` event.
  (value) => withAnswerId(usageObject(value.usage), value),
  // The Responses API's stream: `response.completed` (or `.incomplete`, `.failed`) carries the response, with its id.
  (value) => (isRecord(value.response) ? withAnswerId(usageObject(value.response.usage), value.response) : undefined),
  // Anthropic's stream: `message_start` carries the message, with the input count.
  (value) => (isRecord(value.message) ? usageObject(value.message.usage) : undefined),
  // llama-server's chat stream, unasked: `timings` on the finish chunk.
  (value) => llamaTimings(value.timings),
  // Ollama's native API: counts at the top level of the final object.
  ollamaNative,
];

/** What one parsed value states, in the first dialect that reads it. */
export function statedUsage(value: unknown): StatedUsage | undefined {
  if (!isRecord(value)) return undefined;
  // Indexed: no iterator and result objects per answer while the code is cold.
  for (let i = 0; i < READERS.length; i += 1) {
    const stated = (READERS[i] as Reader)(value);
    if (stated !== undefined) return stated;
  }
  return undefined;
}

/** What a whole answer (one parsed JSON body) states it used: the tally of that one value, with no tally kept. */
export function wholeAnswerUsage(value: unknown): AnswerUsage | undefined {
  const stated = statedUsage(value);
  if (stated === undefined) return undefined;
  const usage: AnswerUsage = { promptTokens: stated.promptTokens, completionTokens: stated.completionTokens, counted: 'usage' };
  return stated.answerId === undefined ? usage : { ...usage, answerId: stated.answerId };
}

/** Folds what the values of one answer state, in order: a later statement of a field wins. */
export class UsageTally {
  #prompt: number | undefined;
  #completion: number | undefined;
  #answerId: string | undefined;
  #stated = false;

  add(value: unknown): void {
    const stated = statedUsage(value);
    if (stated === undefined) return;
    this.#stated = true;
    this.#prompt = stated.promptTokens ?? this.#prompt;
    this.#completion = stated.completionTokens ?? this.#completion;
    if (stated.answerId !== undefined) this.#answerId = stated.answerId;
  }

  get stated(): boolean {
    return this.#stated;
  }

  /**
   * The one rule for every dialect: what the node reported last, else what was relayed; and for an
   * answer cut short, never less than what was relayed — a count stated before the end is only
   * where the node had got to then (Anthropic's `message_start` states `output_tokens` 0 or 1, a
   * vLLM stream with continuous usage states a running count). `relayed`: the generated-text
   * events the gateway passed on (seen-tokens.ts); undefined for an answer whose events are not
   * counted (a whole JSON body). A whole answer's stated count is final, even below the relayed
   * count (which overcounts where a dialect repeats the text in a closing event).
   */
  usage(relayed: number | undefined, end: AnswerEnd): AnswerUsage | undefined {
    const usage = this.#figures(relayed, end);
    return usage === undefined || this.#answerId === undefined ? usage : { ...usage, answerId: this.#answerId };
  }

  #figures(relayed: number | undefined, end: AnswerEnd): AnswerUsage | undefined {
    if (!this.#stated)
      return relayed === undefined ? undefined : { promptTokens: undefined, completionTokens: relayed, counted: 'seen' };
    const reported = this.#completion;
    if (end === 'whole' || relayed === undefined || (reported !== undefined && reported >= relayed)) {
      return { promptTokens: this.#prompt, completionTokens: reported, counted: 'usage' };
    }
    return { promptTokens: this.#prompt, completionTokens: relayed, counted: 'seen' };
  }
}
