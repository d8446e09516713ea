// Pure: recognise what an upstream error body means (PROTOCOLS.md §6.1), so the gateway can re-route
// or answer in OpenAI's own shapes instead of passing each server's dialect through.

export type UpstreamErrorMeaning =
  | { readonly kind: 'context_overflow'; readonly nCtx: number | undefined; readonly promptTokens: number | undefined; readonly message: string }
  | { readonly kind: 'model_not_found'; readonly message: string };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function positive(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : undefined;
}

const OVERFLOW_TEXT = [
  /exceeds the available context size/i,
  /maximum context length/i,
  /is longer than the model's context length/i,
  /larger than the max context size/i,
  /the input length exceeds the context length/i,
  /longer than the maximum model length/i,
];

const NOT_FOUND_TEXT = [/model '.*' not found/i, /model ".*" not found/i, /The model `.*` does not exist/i, /does not exist/i];

/** The number after `maximum context length is`, for vLLM's and SGLang's messages. */
function contextFromText(message: string): number | undefined {
  const match = /context length (?:is|of) (\d+)/i.exec(message) ?? /context length \((\d+) tokens\)/i.exec(message);
  return match?.[1] === undefined ? undefined : Number(match[1]);
}

export function interpretUpstreamError(status: number, bodyText: string): UpstreamErrorMeaning | undefined {
  if (status !== 400 && status !== 404) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(bodyText);
  } catch {
    return undefined;
  }
  if (!isRecord(body)) return undefined;
  // Nested {"error":{...}} (llama.cpp, vLLM, OpenAI) or flat {"object":"error",...} (old vLLM, SGLang).
  const error = isRecord(body.error) ? body.error : body;
  const message = typeof error.message === 'string' ? error.message : typeof body.error === 'string' ? body.error : '';
  if (error.type === 'exceed_context_size_error' || (status === 400 && OVERFLOW_TEXT.some((re) => re.test(message)))) {
    return {
      kind: 'context_overflow',
      nCtx: positive(error.n_ctx) ?? contextFromText(message),
      promptTokens: positive(error.n_prompt_tokens),
      message,
    };
  }
  if (NOT_FOUND_TEXT.some((re) => re.test(message)) && (status === 404 || /not found/i.test(message))) {
    return { kind: 'model_not_found', message };
  }
  return undefined;
}
