// llama-server's inference answers (PROTOCOLS.md §1.11, §1.12, §7): chat and completion bodies in
// its key order, `chatcmpl-` + 32 alnum ids, `timings`, usage per include_usage, `[DONE]`, the
// exceed-context 400 and the unified-KV 500.

import { decideLlamaCpp, type ContextError } from '#src/sim/context-rules.ts';
import type { CompletionMeta, GenerationFormat, InferenceDialect, InferenceEndpoint } from '#src/sim/inference-dialect.ts';
import type { GenerationOutcome } from '#src/sim/model-engine.ts';
import { SSE_DONE, type SseEvent } from '#src/sim/reply.ts';
import { jsonErrorOffset } from '#src/sim/request-body.ts';
import { alnumId, hexId } from '#src/sim/seeded-random.ts';
import { LLAMA_BUILD_INFO, LLAMA_SSE_HEADERS, llamaError, llamaJson } from '#src/sim/kinds/llamacpp-shapes.ts';
import { requestedEncoding } from '#src/sim/embedding-encoding.ts';
import type { ToolCallAnswer } from '#src/sim/scripted-answer.ts';
import { chatFinishReason, chatToolCalls, chatToolDelta } from '#src/sim/tool-call-shapes.ts';

const CONTEXT_EXHAUSTED = 'Context size has been exceeded.';

function round3(value: number): number {
  return Math.round(value * 1000) / 1000;
}

export function llamaTimings(outcome: GenerationOutcome): Record<string, number> {
  const promptMs = round3(outcome.promptMs);
  const predictedMs = round3(outcome.predictedMs);
  // prompt_n counts the tokens processed; the ones reused from the slot's cache are cache_n.
  const promptN = outcome.promptTokens - outcome.cachedTokens;
  const predictedN = outcome.completionTokens;
  return {
    cache_n: outcome.cachedTokens,
    prompt_n: promptN,
    prompt_ms: promptMs,
    prompt_per_token_ms: promptN > 0 ? promptMs / promptN : 0,
    prompt_per_second: promptMs > 0 ? (promptN * 1000) / promptMs : 0,
    predicted_n: predictedN,
    predicted_ms: predictedMs,
    predicted_per_token_ms: predictedN > 0 ? predictedMs / predictedN : 0,
    predicted_per_second: predictedMs > 0 ? (predictedN * 1000) / predictedMs : 0,
  };
}

function usage(outcome: GenerationOutcome): Record<string, unknown> {
  return {
    completion_tokens: outcome.completionTokens,
    prompt_tokens: outcome.promptTokens,
    total_tokens: outcome.completionTokens + outcome.promptTokens,
    prompt_tokens_details: { cached_tokens: outcome.cachedTokens },
  };
}

function chatFormat(meta: CompletionMeta, includeUsage: boolean, call: ToolCallAnswer | undefined): GenerationFormat {
  const chunk = (choices: unknown[]): Record<string, unknown> => ({
    choices,
    created: meta.created,
    id: meta.id,
    model: meta.model,
    system_fingerprint: LLAMA_BUILD_INFO,
    object: 'chat.completion.chunk',
  });
  return {
    body: (outcome) => ({
      choices: [
        {
          finish_reason: chatFinishReason(outcome, call),
          index: 0,
          message:
            call === undefined
              ? { role: 'assistant', content: outcome.text }
              : { role: 'assistant', content: null, tool_calls: chatToolCalls(call, outcome.text) },
        },
      ],
      created: meta.created,
      model: meta.model,
      system_fingerprint: LLAMA_BUILD_INFO,
      object: 'chat.completion',
      usage: usage(outcome),
      id: meta.id,
      timings: llamaTimings(outcome),
    }),
    stream: () => ({
      opening: () => [{ data: chunk([{ finish_reason: null, index: 0, delta: { role: 'assistant', content: null } }]) }],
      token: (piece, index) => [
        {
          data: chunk([
            { finish_reason: null, index: 0, delta: call === undefined ? { content: piece } : chatToolDelta(call, piece, index) },
          ]),
        },
      ],
      closing: (outcome) => {
        const finish = chunk([{ finish_reason: chatFinishReason(outcome, call), index: 0, delta: {} }]);
        if (!includeUsage) return [{ data: { ...finish, timings: llamaTimings(outcome) } }, SSE_DONE];
        const usageChunk = { ...chunk([]), usage: usage(outcome), timings: llamaTimings(outcome) };
        return [{ data: finish }, { data: usageChunk }, SSE_DONE];
      },
    }),
  };
}

function completionFormat(meta: CompletionMeta): GenerationFormat {
  const final = (text: string, outcome: GenerationOutcome): Record<string, unknown> => ({
    choices: [{ text, index: 0, logprobs: null, finish_reason: outcome.finishReason }],
    created: meta.created,
    model: meta.model,
    system_fingerprint: LLAMA_BUILD_INFO,
    object: 'text_completion',
    usage: usage(outcome),
    id: meta.id,
    timings: llamaTimings(outcome),
  });
  return {
    body: (outcome) => final(outcome.text, outcome),
    stream: () => ({
      opening: () => [],
      token: (piece) => [
        {
          data: {
            choices: [{ text: piece, index: 0, logprobs: null, finish_reason: null }],
            created: meta.created,
            model: meta.model,
            system_fingerprint: LLAMA_BUILD_INFO,
            object: 'text_completion',
            id: meta.id,
          },
        },
      ],
      // The final completions chunk carries usage even without stream_options (§7).
      closing: (outcome) => [{ data: final('', outcome) }, SSE_DONE],
    }),
  };
}

/** nlohmann's wording, with the line/column V8 reports (or the end of the text). */
function parseErrorMessage(text: string): string {
  if (text.trim() === '') {
    return '[json.exception.parse_error.101] parse error at line 1, column 1: attempting to parse an empty input; check that your input string or stream contains the expected JSON';
  }
  const offset = Math.min(jsonErrorOffset(text), text.length - 1);
  const before = text.slice(0, offset + 1);
  const line = before.split('\n').length;
  const column = offset + 1 - before.lastIndexOf('\n') - 1;
  return `[json.exception.parse_error.101] parse error at line ${line}, column ${column}: syntax error while parsing value - invalid literal; last read: '${before.slice(-40)}'`;
}

function contextError(error: ContextError) {
  return llamaError(
    400,
    'exceed_context_size_error',
    `request (${error.promptTokens} tokens) exceeds the available context size (${error.contextTokens} tokens), try increasing it`,
    { n_prompt_tokens: error.promptTokens, n_ctx: error.contextTokens },
  );
}

const MAX_TOKEN_FIELDS: Readonly<Record<InferenceEndpoint, readonly string[]>> = {
  chat: ['max_completion_tokens', 'max_tokens', 'n_predict'],
  completion: ['max_tokens', 'n_predict'],
  embeddings: [],
  responses: ['max_output_tokens'],
  messages: ['max_tokens'],
  count_tokens: [],
  chat_tokens: [],
  responses_tokens: [],
};

/** `proxied`: answers pass through the router, which re-sends them chunked. */
export function llamaDialect(random: () => number, proxied: boolean): InferenceDialect {
  const exhaustedEvent: SseEvent = { data: { error: { code: 500, message: CONTEXT_EXHAUSTED, type: 'server_error' } } };
  return {
    json: llamaJson,
    sseHeaders: LLAMA_SSE_HEADERS,
    chunkedReplies: proxied,
    malformedJson: (text) => llamaError(500, 'server_error', parseErrorMessage(text)),
    missingField: (field) => llamaError(400, 'invalid_request_error', `'${field}' is required`),
    decide: decideLlamaCpp,
    contextError,
    embeddingsTooLong: (promptTokens, contextTokens) =>
      promptTokens > contextTokens
        ? llamaError(
            400,
            'exceed_context_size_error',
            `input (${promptTokens} tokens) is larger than the max context size (${contextTokens} tokens). skipping`,
            { n_prompt_tokens: promptTokens, n_ctx: contextTokens },
          )
        : undefined,
    kvExhaustedReply: () => llamaError(500, 'server_error', CONTEXT_EXHAUSTED),
    kvExhaustedEvent: () => exhaustedEvent,
    newId: (endpoint) => (endpoint === 'responses' ? `resp_${hexId(random, 32)}` : `chatcmpl-${alnumId(random, 32)}`),
    format: (endpoint, meta, includeUsage, toolCall) =>
      endpoint === 'chat' ? chatFormat(meta, includeUsage, toolCall) : completionFormat(meta),
    embeddingEncoding: (value) =>
      requestedEncoding(value) ??
      llamaError(400, 'invalid_request_error', 'The format to return the embeddings in. Can be either float or base64'),
    // A base64 entry also says its encoding (`format_embeddings_response_oaicompat`).
    embeddings: ({ meta, requestedModel, vectors, encoding, promptTokens }) => ({
      model: requestedModel ?? meta.model,
      object: 'list',
      usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
      data: vectors.map((embedding, index) =>
        encoding === 'base64'
          ? { embedding, index, object: 'embedding', encoding_format: 'base64' }
          : { embedding, index, object: 'embedding' },
      ),
    }),
    maxTokenFields: (endpoint) => MAX_TOKEN_FIELDS[endpoint],
    // Its Messages routes keep the OpenAI-style error bodies (PROTOCOLS.md §7.z).
    anthropic: { error: (reply) => reply, modelFirst: false, deltaInputTokens: false, omitsStopSequence: false },
  };
}
