// SGLang's OpenAI-compatible answers (PROTOCOLS.md §4): flat legacy error bodies
// {"object":"error",...}, its two context-length messages, bare uuid-hex ids, `matched_stop`, and
// [DONE]-terminated streams whose every chunk states `"usage":null` (it writes every field of the
// chunk, asked for usage or not), with the usage chunk last when asked.

import { decideSglang, type ContextError } from '#src/sim/context-rules.ts';
import type { CompletionMeta, GenerationFormat, InferenceDialect } from '#src/sim/inference-dialect.ts';
import { OPENAI_MAX_TOKEN_FIELDS } from '#src/sim/openai-surface.ts';
import type { GenerationOutcome } from '#src/sim/model-engine.ts';
import { jsonReply, SSE_DONE, type Reply } from '#src/sim/reply.ts';
import { hexId } from '#src/sim/seeded-random.ts';
import { pydanticJsonInvalid, pydanticMissing } from '#src/sim/kinds/vllm-dialect.ts';
import type { ToolCallAnswer } from '#src/sim/scripted-answer.ts';
import { chatFinishReason, chatToolCalls, chatToolDelta } from '#src/sim/tool-call-shapes.ts';

export const SGLANG_JSON_HEADERS: Readonly<Record<string, string>> = { server: 'uvicorn', 'Content-Type': 'application/json' };
const SGLANG_SSE_HEADERS: Readonly<Record<string, string>> = {
  server: 'uvicorn',
  'Content-Type': 'text/event-stream; charset=utf-8',
};

export function sglangJson(status: number, body: unknown): Reply {
  return jsonReply(status, body, SGLANG_JSON_HEADERS);
}

export function sglangError(status: number, type: string, message: string): Reply {
  return sglangJson(status, { object: 'error', message, type, param: null, code: status });
}

function usage(outcome: GenerationOutcome): Record<string, unknown> {
  return {
    prompt_tokens: outcome.promptTokens,
    total_tokens: outcome.promptTokens + outcome.completionTokens,
    completion_tokens: outcome.completionTokens,
    prompt_tokens_details: null,
  };
}

function format(
  endpoint: 'chat' | 'completion',
  meta: CompletionMeta,
  includeUsage: boolean,
  toolCall?: ToolCallAnswer,
): GenerationFormat {
  const isChat = endpoint === 'chat';
  const call = isChat ? toolCall : undefined;
  const object = isChat ? 'chat.completion.chunk' : 'text_completion';
  const chunk = (choices: unknown[]): Record<string, unknown> => ({
    id: meta.id,
    object,
    created: meta.created,
    model: meta.model,
    choices,
    usage: null,
  });
  const streamChoice = (content: string, role: boolean, finishReason: string | null): Record<string, unknown> =>
    isChat
      ? {
          index: 0,
          delta: role ? { role: 'assistant', content } : { content },
          logprobs: null,
          finish_reason: finishReason,
          matched_stop: null,
        }
      : { index: 0, text: content, logprobs: null, finish_reason: finishReason, matched_stop: null };
  return {
    body: (outcome) => ({
      id: meta.id,
      object: isChat ? 'chat.completion' : 'text_completion',
      created: meta.created,
      model: meta.model,
      choices: [
        isChat
          ? {
              index: 0,
              message: {
                role: 'assistant',
                content: call === undefined ? outcome.text : null,
                reasoning_content: null,
                tool_calls: call === undefined ? null : chatToolCalls(call, outcome.text),
              },
              logprobs: null,
              finish_reason: chatFinishReason(outcome, call),
              matched_stop: null,
            }
          : { index: 0, text: outcome.text, logprobs: null, finish_reason: outcome.finishReason, matched_stop: null },
      ],
      usage: usage(outcome),
    }),
    stream: () => ({
      opening: () => (isChat ? [{ data: chunk([streamChoice('', true, null)]) }] : []),
      token: (piece, index) => [
        {
          data: chunk([
            call === undefined
              ? streamChoice(piece, false, null)
              : { index: 0, delta: chatToolDelta(call, piece, index), logprobs: null, finish_reason: null, matched_stop: null },
          ]),
        },
      ],
      closing: (outcome) => [
        { data: chunk([streamChoice('', false, isChat ? chatFinishReason(outcome, call) : outcome.finishReason)]) },
        ...(includeUsage ? [{ data: { ...chunk([]), usage: usage(outcome) } }] : []),
        SSE_DONE,
      ],
    }),
  };
}

function contextError(error: ContextError): Reply {
  if (error.rule === 'sglang_total_too_long') {
    const total = error.promptTokens + error.requestedTokens;
    return sglangError(
      400,
      'BadRequestError',
      `Requested token count exceeds the model's maximum context length of ${error.contextTokens} tokens. You requested a total of ${total} tokens: ${error.promptTokens} tokens from the input messages and ${error.requestedTokens} tokens for the completion. Please reduce the number of tokens in the input messages or the completion to fit within the limit.`,
    );
  }
  return sglangError(400, 'BadRequestError', inputTooLong(error.promptTokens, error.contextTokens));
}

function inputTooLong(promptTokens: number, contextTokens: number): string {
  return `The input (${promptTokens} tokens) is longer than the model's context length (${contextTokens} tokens).`;
}

export function sglangDialect(random: () => number): InferenceDialect {
  return {
    json: sglangJson,
    sseHeaders: SGLANG_SSE_HEADERS,
    chunkedReplies: false,
    malformedJson: (text) => sglangError(400, 'Bad Request', pydanticJsonInvalid(text)),
    missingField: (field) => sglangError(400, 'Bad Request', pydanticMissing(field)),
    decide: decideSglang,
    contextError,
    embeddingsTooLong: (promptTokens, contextTokens) =>
      promptTokens >= contextTokens ? sglangError(400, 'BadRequestError', inputTooLong(promptTokens, contextTokens)) : undefined,
    kvExhaustedReply: () => sglangError(500, 'InternalServerError', 'scheduler failure'),
    kvExhaustedEvent: () => ({
      data: { error: { object: 'error', message: 'scheduler failure', type: 'InternalServerError', param: null, code: 500 } },
    }),
    newId: (endpoint) => (endpoint === 'responses' ? `resp_${hexId(random, 32)}` : hexId(random, 32)),
    format,
    // Its embeddings answer is always the float array (the request's encoding_format is not read).
    embeddingEncoding: () => 'float',
    embeddings: ({ meta, vectors, promptTokens }) => ({
      data: vectors.map((embedding, index) => ({ object: 'embedding', embedding, index })),
      model: meta.model,
      object: 'list',
      usage: { prompt_tokens: promptTokens, completion_tokens: 0, total_tokens: promptTokens, prompt_tokens_details: null },
    }),
    maxTokenFields: (endpoint) => OPENAI_MAX_TOKEN_FIELDS[endpoint],
  };
}
