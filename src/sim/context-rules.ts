// How each kind of server treats a prompt against its context window, as pure decisions: reject it
// (with the numbers the kind's error message carries) or plan how many tokens to generate.

export type FinishReason = 'stop' | 'length';

/** Tokens generated when a request sets no limit; the simulated model then ends with "stop". */
export const DEFAULT_GENERATED_TOKENS = 16;

export interface GenerationPlan {
  /** Prompt tokens the server processes (Ollama: after truncation). */
  readonly promptTokens: number;
  readonly maxNewTokens: number;
  /** Reported when `maxNewTokens` tokens have been generated. */
  readonly finishReason: FinishReason;
  /** The answer's pieces (one per token), when the model says something of its own; else the filler words. */
  readonly pieces?: readonly string[];
  /** The prompt as one text (tools, system, messages), for the prompt cache's prefix match. */
  readonly promptText?: string;
}

export type ContextError =
  | { readonly rule: 'llamacpp_prompt_too_long'; readonly promptTokens: number; readonly contextTokens: number }
  | {
      readonly rule: 'vllm_too_long';
      readonly promptTokens: number;
      readonly requestedTokens: number;
      readonly contextTokens: number;
    }
  | { readonly rule: 'sglang_input_too_long'; readonly promptTokens: number; readonly contextTokens: number }
  | {
      readonly rule: 'sglang_total_too_long';
      readonly promptTokens: number;
      readonly requestedTokens: number;
      readonly contextTokens: number;
    };

export type ContextVerdict =
  { readonly ok: true; readonly plan: GenerationPlan } | { readonly ok: false; readonly error: ContextError };

/**
 * Generates the request's limit (or the default), cut at `roomTokens` with "length". With a
 * `naturalTokens` answer (the model ends by itself), that answer ends with "stop" when it fits the
 * limit and is cut at the limit with "length" when it does not.
 */
function planWithin(
  promptTokens: number,
  requested: number | undefined,
  roomTokens: number,
  naturalTokens: number | undefined,
): GenerationPlan {
  const natural = naturalTokens !== undefined && (requested === undefined || naturalTokens <= requested);
  const wanted = natural ? naturalTokens : (requested ?? DEFAULT_GENERATED_TOKENS);
  const wantedReason: FinishReason = natural || requested === undefined ? 'stop' : 'length';
  if (wanted <= roomTokens) return { promptTokens, maxNewTokens: wanted, finishReason: wantedReason };
  return { promptTokens, maxNewTokens: Math.max(0, roomTokens), finishReason: 'length' };
}

/** llama.cpp: a prompt of n_ctx tokens or more is a 400; generation stops at n_ctx. */
export function decideLlamaCpp(
  promptTokens: number,
  requested: number | undefined,
  contextTokens: number,
  naturalTokens?: number,
): ContextVerdict {
  if (promptTokens >= contextTokens) {
    return { ok: false, error: { rule: 'llamacpp_prompt_too_long', promptTokens, contextTokens } };
  }
  return { ok: true, plan: planWithin(promptTokens, requested, contextTokens - promptTokens, naturalTokens) };
}

/**
 * vLLM: prompt + max_tokens must fit max_model_len. Without max_tokens the prompt needs room for
 * at least one output token.
 */
export function decideVllm(
  promptTokens: number,
  requested: number | undefined,
  contextTokens: number,
  naturalTokens?: number,
): ContextVerdict {
  const requestedTokens = requested ?? 0;
  const needed = promptTokens + Math.max(1, requestedTokens);
  if (needed > contextTokens) {
    return { ok: false, error: { rule: 'vllm_too_long', promptTokens, requestedTokens, contextTokens } };
  }
  return { ok: true, plan: planWithin(promptTokens, requested, contextTokens - promptTokens, naturalTokens) };
}

/** SGLang: both of its checks use `>=` against the context length. */
export function decideSglang(
  promptTokens: number,
  requested: number | undefined,
  contextTokens: number,
  naturalTokens?: number,
): ContextVerdict {
  if (promptTokens >= contextTokens) {
    return { ok: false, error: { rule: 'sglang_input_too_long', promptTokens, contextTokens } };
  }
  if (requested !== undefined && promptTokens + requested >= contextTokens) {
    return {
      ok: false,
      error: { rule: 'sglang_total_too_long', promptTokens, requestedTokens: requested, contextTokens },
    };
  }
  return { ok: true, plan: planWithin(promptTokens, requested, contextTokens - promptTokens, naturalTokens) };
}

/** Ollama: truncates the prompt to num_ctx and shifts the context while generating; never fails. */
export function decideOllama(
  promptTokens: number,
  requested: number | undefined,
  contextTokens: number,
  naturalTokens?: number,
): ContextVerdict {
  return {
    ok: true,
    plan: planWithin(Math.min(promptTokens, contextTokens), requested, Number.POSITIVE_INFINITY, naturalTokens),
  };
}

/** The request's output limit: the first non-negative integer among the kind's field names. */
export function requestedMaxTokens(body: Readonly<Record<string, unknown>>, fields: readonly string[]): number | undefined {
  for (const field of fields) {
    const value = body[field];
    if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return value;
  }
  return undefined;
}
