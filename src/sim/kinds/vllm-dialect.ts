// vLLM's OpenAI server (PROTOCOLS.md §2): nested error bodies with a numeric `code`, pydantic key
// order, `chatcmpl-`/`cmpl-`/`embd-` + uuid-hex ids, the max_model_len 400, and [DONE]-terminated
// streams with usage per include_usage: asked, a last chunk with `"choices":[]` and the usage, and
// `"usage":null` on every other chunk (as OpenAI does, and vLLM did before 0.6).

import { decideVllm, type ContextError } from '#src/sim/context-rules.ts';
import type { CompletionMeta, GenerationFormat, InferenceDialect, InferenceEndpoint } from '#src/sim/inference-dialect.ts';
import { OPENAI_MAX_TOKEN_FIELDS } from '#src/sim/openai-surface.ts';
import type { GenerationOutcome } from '#src/sim/model-engine.ts';
import { jsonReply, SSE_DONE, type Reply } from '#src/sim/reply.ts';
import { jsonErrorOffset } from '#src/sim/request-body.ts';
import { hexId } from '#src/sim/seeded-random.ts';
import { requestedEncoding } from '#src/sim/embedding-encoding.ts';
import { wrappedError, type AnthropicStyle } from '#src/sim/anthropic-messages.ts';
import type { ToolCallAnswer } from '#src/sim/scripted-answer.ts';
import { chatFinishReason, chatToolCalls, chatToolDelta } from '#src/sim/tool-call-shapes.ts';

/** vLLM's Anthropic router (`translate_error_response`): its error's type and message, wrapped. */
const VLLM_ANTHROPIC: AnthropicStyle = {
  error: (reply) => wrappedError(reply, (_status, inner) => inner ?? 'BadRequestError'),
  modelFirst: false,
  deltaInputTokens: true,
  omitsStopSequence: false,
};

export const VLLM_JSON_HEADERS: Readonly<Record<string, string>> = { server: 'uvicorn', 'Content-Type': 'application/json' };
const VLLM_SSE_HEADERS: Readonly<Record<string, string>> = {
  server: 'uvicorn',
  'Content-Type': 'text/event-stream; charset=utf-8',
};

export function vllmJson(status: number, body: unknown): Reply {
  return jsonReply(status, body, VLLM_JSON_HEADERS);
}

export function vllmError(status: number, type: string, message: string, param: string | null = null): Reply {
  return vllmJson(status, { error: { message, type, param, code: status } });
}

/** FastAPI's request-validation errors, as vLLM's handler renders them. */
export function pydanticJsonInvalid(text: string): string {
  return `[{'type': 'json_invalid', 'loc': ('body', ${jsonErrorOffset(text)}), 'msg': 'JSON decode error', 'input': {}, 'ctx': {'error': 'Expecting value'}}]`;
}

/** FastAPI's rejection of a value outside a `Literal[...]` field. */
export function pydanticLiteral(field: string, input: string, expected: string): string {
  return `[{'type': 'literal_error', 'loc': ('body', '${field}'), 'msg': "Input should be ${expected}", 'input': ${input}, 'ctx': {'expected': "${expected}"}}]`;
}

export function pydanticMissing(field: string): string {
  return `[{'type': 'missing', 'loc': ('body', '${field}'), 'msg': 'Field required', 'input': {}}]`;
}

function usage(outcome: GenerationOutcome, withDetails: boolean): Record<string, unknown> {
  return {
    prompt_tokens: outcome.promptTokens,
    total_tokens: outcome.promptTokens + outcome.completionTokens,
    completion_tokens: outcome.completionTokens,
    ...(withDetails ? { prompt_tokens_details: null } : {}),
  };
}

/** Asked for usage, every chunk states `usage` (null until the last). */
const usageSlot = (includeUsage: boolean): Record<string, unknown> => (includeUsage ? { usage: null } : {});

function chatFormat(meta: CompletionMeta, includeUsage: boolean, call: ToolCallAnswer | undefined): GenerationFormat {
  const chunk = (choices: unknown[]): Record<string, unknown> => ({
    id: meta.id,
    object: 'chat.completion.chunk',
    created: meta.created,
    model: meta.model,
    choices,
    ...usageSlot(includeUsage),
  });
  const delta = (content: Record<string, unknown>, finishReason: string | null): Record<string, unknown> => ({
    index: 0,
    delta: content,
    logprobs: null,
    finish_reason: finishReason,
    ...(finishReason === null ? {} : { stop_reason: null }),
  });
  return {
    body: (outcome) => ({
      id: meta.id,
      object: 'chat.completion',
      created: meta.created,
      model: meta.model,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: call === undefined ? outcome.text : null,
            refusal: null,
            annotations: null,
            audio: null,
            function_call: null,
            tool_calls: call === undefined ? [] : chatToolCalls(call, outcome.text),
            reasoning_content: null,
          },
          logprobs: null,
          finish_reason: chatFinishReason(outcome, call),
          stop_reason: null,
        },
      ],
      service_tier: null,
      system_fingerprint: null,
      usage: usage(outcome, true),
      prompt_logprobs: null,
      kv_transfer_params: null,
    }),
    stream: () => ({
      opening: () => [{ data: chunk([delta({ role: 'assistant', content: '' }, null)]) }],
      token: (piece, index) => [
        { data: chunk([delta(call === undefined ? { content: piece } : chatToolDelta(call, piece, index), null)]) },
      ],
      closing: (outcome) => [
        { data: chunk([delta(call === undefined ? { content: '' } : {}, chatFinishReason(outcome, call))]) },
        ...(includeUsage ? [{ data: { ...chunk([]), usage: usage(outcome, false) } }] : []),
        SSE_DONE,
      ],
    }),
  };
}

function completionFormat(meta: CompletionMeta, includeUsage: boolean): GenerationFormat {
  const choice = (text: string, finishReason: string | null): Record<string, unknown> => ({
    index: 0,
    text,
    logprobs: null,
    finish_reason: finishReason,
    stop_reason: null,
  });
  const chunk = (choices: unknown[]): Record<string, unknown> => ({
    id: meta.id,
    object: 'text_completion',
    created: meta.created,
    model: meta.model,
    choices,
    ...usageSlot(includeUsage),
  });
  return {
    body: (outcome) => ({
      id: meta.id,
      object: 'text_completion',
      created: meta.created,
      model: meta.model,
      choices: [{ ...choice(outcome.text, outcome.finishReason), prompt_logprobs: null }],
      service_tier: null,
      system_fingerprint: null,
      usage: usage(outcome, true),
      kv_transfer_params: null,
    }),
    stream: () => ({
      opening: () => [],
      token: (piece) => [{ data: chunk([choice(piece, null)]) }],
      closing: (outcome) => [
        { data: chunk([choice('', outcome.finishReason)]) },
        ...(includeUsage ? [{ data: { ...chunk([]), usage: usage(outcome, false) } }] : []),
        SSE_DONE,
      ],
    }),
  };
}

/** The current renderer's text; the prompt count is capped at max_model_len + 1 ("at least"). */
function contextError(error: ContextError): Reply {
  const limit = error.contextTokens;
  const prompt = Math.min(error.promptTokens, limit + 1);
  const output = 'requestedTokens' in error ? error.requestedTokens : 0;
  const message =
    `This model's maximum context length is ${limit} tokens. However, you requested ${output} output tokens and your prompt contains at least ${prompt} input tokens, for a total of at least ${prompt + output} tokens. ` +
    `Please reduce the length of the input prompt or the number of requested output tokens. (parameter=input_tokens, value=${prompt})`;
  return vllmError(400, 'BadRequestError', message, 'input_tokens');
}

const ID_PREFIX: Readonly<Record<InferenceEndpoint, string>> = {
  chat: 'chatcmpl-',
  completion: 'cmpl-',
  embeddings: 'embd-',
  responses: 'resp_',
  messages: 'chatcmpl-',
  count_tokens: 'chatcmpl-',
  chat_tokens: 'chatcmpl-',
  responses_tokens: 'resp_',
};

export function vllmDialect(random: () => number): InferenceDialect {
  return {
    json: vllmJson,
    sseHeaders: VLLM_SSE_HEADERS,
    chunkedReplies: false,
    malformedJson: (text) => vllmError(400, 'Bad Request', pydanticJsonInvalid(text)),
    missingField: (field) => vllmError(400, 'Bad Request', pydanticMissing(field)),
    decide: decideVllm,
    contextError,
    embeddingsTooLong: (promptTokens, contextTokens) =>
      promptTokens > contextTokens
        ? vllmError(
            400,
            'BadRequestError',
            `This model's maximum context length is ${contextTokens} tokens. However, you requested ${promptTokens} tokens in the input for embedding generation. Please reduce the length of the input.`,
          )
        : undefined,
    kvExhaustedReply: () => vllmError(500, 'InternalServerError', 'engine failure'),
    kvExhaustedEvent: () => ({
      data: { error: { message: 'engine failure', type: 'InternalServerError', param: null, code: 500 } },
    }),
    newId: (endpoint) => `${ID_PREFIX[endpoint]}${hexId(random, 32)}`,
    format: (endpoint, meta, includeUsage, toolCall) =>
      endpoint === 'chat' ? chatFormat(meta, includeUsage, toolCall) : completionFormat(meta, includeUsage),
    // `encoding_format: Literal["float", "base64"]`; base64 is the float32 array's bytes.
    embeddingEncoding: (value) =>
      requestedEncoding(value) ??
      vllmError(400, 'Bad Request', pydanticLiteral('encoding_format', JSON.stringify(value), "'float' or 'base64'")),
    embeddings: ({ meta, vectors, promptTokens }) => ({
      id: meta.id,
      object: 'list',
      created: meta.created,
      model: meta.model,
      data: vectors.map((embedding, index) => ({ index, object: 'embedding', embedding })),
      usage: { prompt_tokens: promptTokens, total_tokens: promptTokens, completion_tokens: 0, prompt_tokens_details: null },
    }),
    maxTokenFields: (endpoint) => OPENAI_MAX_TOKEN_FIELDS[endpoint],
    anthropic: VLLM_ANTHROPIC,
  };
}
