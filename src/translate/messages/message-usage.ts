// A Chat Completions `usage` → Anthropic's: input_tokens are the prompt tokens not read from the
// cache (Anthropic counts cache reads apart), cache_read_input_tokens the node's
// `prompt_tokens_details.cached_tokens`, output_tokens the completion tokens.

import { isRecord } from '#src/core/is-record.ts';

export interface MessageUsage {
  readonly input_tokens: number;
  readonly output_tokens: number;
  readonly cache_read_input_tokens: number;
  readonly cache_creation_input_tokens: number;
}

export const NO_USAGE: MessageUsage = Object.freeze({
  input_tokens: 0,
  output_tokens: 0,
  cache_read_input_tokens: 0,
  cache_creation_input_tokens: 0,
});

const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0);

export function messageUsage(usage: unknown): MessageUsage {
  if (!isRecord(usage)) return NO_USAGE;
  const prompt = count(usage.prompt_tokens);
  const details = usage.prompt_tokens_details;
  const cached = Math.min(prompt, isRecord(details) ? count(details.cached_tokens) : 0);
  return {
    input_tokens: prompt - cached,
    output_tokens: count(usage.completion_tokens),
    cache_read_input_tokens: cached,
    cache_creation_input_tokens: 0,
  };
}
