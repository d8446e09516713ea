// Ollama's OpenAI-compatibility answers (PROTOCOLS.md §3): errors {message,type,param:null,code:null}
// with the type from the status, Go's JSON error wording, `fp_ollama`, short numeric ids, prompt
// truncation instead of context errors, [DONE]-terminated streams.

import { decideOllama } from '#src/sim/context-rules.ts';
import type { CompletionMeta, GenerationFormat, InferenceDialect } from '#src/sim/inference-dialect.ts';
import { OPENAI_MAX_TOKEN_FIELDS } from '#src/sim/openai-surface.ts';
import type { GenerationOutcome } from '#src/sim/model-engine.ts';
import { jsonReply, SSE_DONE, type Reply } from '#src/sim/reply.ts';
import { jsonErrorOffset } from '#src/sim/request-body.ts';
import { hexId } from '#src/sim/seeded-random.ts';
import { wrappedError } from '#src/sim/anthropic-messages.ts';
import type { ToolCallAnswer } from '#src/sim/scripted-answer.ts';
import { chatFinishReason, chatToolCalls, chatWholeToolDelta } from '#src/sim/tool-call-shapes.ts';

export const OLLAMA_JSON_HEADERS: Readonly<Record<string, string>> = { 'Content-Type': 'application/json; charset=utf-8' };
const OLLAMA_SSE_HEADERS: Readonly<Record<string, string>> = { 'Content-Type': 'text/event-stream' };
const FINGERPRINT = 'fp_ollama';

export function ollamaJson(status: number, body: unknown): Reply {
  return jsonReply(status, body, OLLAMA_JSON_HEADERS);
}

/** `openai.NewError`: 400 → invalid_request_error, 404 → not_found_error, else api_error; code null. */
export function ollamaOpenAiError(status: number, message: string): Reply {
  const type = status === 400 ? 'invalid_request_error' : status === 404 ? 'not_found_error' : 'api_error';
  return ollamaJson(status, { error: { message, type, param: null, code: null } });
}

/** Ollama's Anthropic layer (`anthropic.NewError`): the type by status, and a `request_id`. */
export function ollamaAnthropicError(reply: Reply, random: () => number): Reply {
  const type = (status: number): string =>
    status === 400
      ? 'invalid_request_error'
      : status === 401
        ? 'authentication_error'
        : status === 403
          ? 'permission_error'
          : status === 404
            ? 'not_found_error'
            : status === 429
              ? 'rate_limit_error'
              : status === 503 || status === 529
                ? 'overloaded_error'
                : 'api_error';
  return wrappedError(reply, type, { request_id: `req_${hexId(random, 24)}` });
}

export function ollamaModelNotFound(name: string): Reply {
  return ollamaOpenAiError(404, `model "${name}" not found, try pulling it first`);
}

/** Go's encoding/json wording for a body that does not parse. */
function goJsonError(text: string): string {
  if (text.trim() === '') return 'EOF';
  const offset = jsonErrorOffset(text);
  const character = text[offset];
  return character === undefined ? 'unexpected EOF' : `invalid character '${character}' looking for beginning of value`;
}

function usage(outcome: GenerationOutcome): Record<string, number> {
  return {
    prompt_tokens: outcome.promptTokens,
    completion_tokens: outcome.completionTokens,
    total_tokens: outcome.promptTokens + outcome.completionTokens,
  };
}

/** Ollama parses a tool call out of the output before sending it: the call comes whole, in one chunk, at the end. */
function format(
  endpoint: 'chat' | 'completion',
  meta: CompletionMeta,
  includeUsage: boolean,
  toolCall?: ToolCallAnswer,
): GenerationFormat {
  const isChat = endpoint === 'chat';
  const call = isChat ? toolCall : undefined;
  const head = (object: string, choices: unknown[]): Record<string, unknown> => ({
    id: meta.id,
    object,
    created: meta.created,
    model: meta.model,
    system_fingerprint: FINGERPRINT,
    choices,
  });
  const chunkObject = isChat ? 'chat.completion.chunk' : 'text_completion';
  const streamChoice = (content: string, finishReason: string | null): Record<string, unknown> =>
    isChat
      ? { index: 0, delta: { role: 'assistant', content }, finish_reason: finishReason }
      : { text: content, index: 0, finish_reason: finishReason };
  return {
    body: (outcome) => ({
      ...head(isChat ? 'chat.completion' : 'text_completion', [
        isChat
          ? {
              index: 0,
              message:
                call === undefined
                  ? { role: 'assistant', content: outcome.text }
                  : { role: 'assistant', content: '', tool_calls: chatToolCalls(call, outcome.text) },
              finish_reason: chatFinishReason(outcome, call),
            }
          : { text: outcome.text, index: 0, finish_reason: outcome.finishReason },
      ]),
      usage: usage(outcome),
    }),
    stream: () => ({
      opening: () => [],
      token: (piece) => (call === undefined ? [{ data: head(chunkObject, [streamChoice(piece, null)]) }] : []),
      closing: (outcome) => [
        ...(call === undefined
          ? []
          : [
              {
                data: head(chunkObject, [
                  {
                    index: 0,
                    delta: { role: 'assistant', content: '', ...chatWholeToolDelta(call, outcome.text) },
                    finish_reason: null,
                  },
                ]),
              },
            ]),
        {
          data: head(chunkObject, [
            streamChoice('', call === undefined ? outcome.finishReason : chatFinishReason(outcome, call)),
          ]),
        },
        ...(includeUsage ? [{ data: { ...head(chunkObject, []), usage: usage(outcome) } }] : []),
        SSE_DONE,
      ],
    }),
  };
}

export function ollamaDialect(random: () => number): InferenceDialect {
  const shortId = (): number => Math.floor(random() * 1000);
  return {
    json: ollamaJson,
    sseHeaders: OLLAMA_SSE_HEADERS,
    chunkedReplies: false,
    malformedJson: (text) => ollamaOpenAiError(400, goJsonError(text)),
    missingField: (field) => ollamaOpenAiError(400, `${field} is required`),
    decide: decideOllama,
    contextError: () => ollamaOpenAiError(500, 'unexpected context error'),
    embeddingsTooLong: () => undefined,
    kvExhaustedReply: () => ollamaOpenAiError(500, 'runner failure'),
    kvExhaustedEvent: () => ({ data: { error: { message: 'runner failure', type: 'api_error', param: null, code: null } } }),
    newId: (endpoint) =>
      endpoint === 'chat'
        ? `chatcmpl-${shortId()}`
        : endpoint === 'responses'
          ? `resp_${hexId(random, 24)}`
          : endpoint === 'messages'
            ? `msg_${hexId(random, 24)}`
            : `cmpl-${shortId()}`,
    format,
    // Its OpenAI layer encodes base64 when asked and answers floats for anything else.
    embeddingEncoding: (value) => (value === 'base64' ? 'base64' : 'float'),
    embeddings: ({ meta, vectors, promptTokens }) => ({
      object: 'list',
      data: vectors.map((embedding, index) => ({ object: 'embedding', embedding, index })),
      model: meta.model,
      usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
    }),
    maxTokenFields: (endpoint) => OPENAI_MAX_TOKEN_FIELDS[endpoint],
    anthropic: {
      error: (reply) => ollamaAnthropicError(reply, random),
      modelFirst: true,
      deltaInputTokens: true,
      omitsStopSequence: true,
    },
  };
}
