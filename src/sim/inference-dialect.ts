// What varies between kinds on the OpenAI-compatible inference endpoints: error bodies, context
// rules, ids, and the JSON/SSE shapes. inference.ts runs the shared flow over one of these.

import type { ContextError, ContextVerdict } from '#src/sim/context-rules.ts';
import type { EmbeddingEncoding } from '#src/sim/embedding-encoding.ts';
import type { GenerationOutcome } from '#src/sim/model-engine.ts';
import type { Reply, SseEvent } from '#src/sim/reply.ts';
import type { ResponseWriter } from '#src/sim/response-writer.ts';
import type { ToolCallAnswer } from '#src/sim/scripted-answer.ts';

/** `messages` and `count_tokens`: Anthropic's Messages API (anthropic-messages.ts), on the kinds whose dialect has `anthropic`. */
/** `chat_tokens` and `responses_tokens`: llama-server's `/v1/chat/completions/input_tokens` and `/v1/responses/input_tokens`. */
export type InferenceEndpoint =
  'chat' | 'completion' | 'embeddings' | 'responses' | 'messages' | 'count_tokens' | 'chat_tokens' | 'responses_tokens';

export interface CompletionMeta {
  readonly id: string;
  /** Epoch seconds. */
  readonly created: number;
  /** The model name the answer reports. */
  readonly model: string;
}

export interface StreamFormat {
  /** Events sent with the headers, when the first token is ready. */
  opening(): SseEvent[];
  token(piece: string, index: number): SseEvent[];
  /** The final events, including `[DONE]` when the kind sends it. */
  closing(outcome: GenerationOutcome): SseEvent[];
}

export interface GenerationFormat {
  body(outcome: GenerationOutcome): unknown;
  stream(): StreamFormat;
}

export interface EmbeddingsAnswer {
  readonly meta: CompletionMeta;
  /** The request's `model` value, if a string. */
  readonly requestedModel: string | undefined;
  /** Each vector as `encoding` carries it: numbers, or base64 of little-endian float32. */
  readonly vectors: readonly (readonly number[] | string)[];
  readonly encoding: EmbeddingEncoding;
  readonly promptTokens: number;
}

/** How a kind serves Anthropic's Messages API (anthropic-messages.ts). */
export interface AnthropicStyle {
  /** The kind's error reply on the Messages routes, from the one it gives on the OpenAI routes. */
  error(reply: Reply): Reply;
  /** Ollama's struct order puts `model` before `content`; llama-server and vLLM put it after. */
  readonly modelFirst: boolean;
  /** vLLM and Ollama repeat `input_tokens` in message_delta's usage; llama-server sends only `output_tokens`. */
  readonly deltaInputTokens: boolean;
  /** Ollama leaves `stop_sequence` out (omitempty); the others send null. */
  readonly omitsStopSequence: boolean;
}

export interface InferenceDialect {
  json(status: number, body: unknown): Reply;
  readonly sseHeaders: Readonly<Record<string, string>>;
  /** Router-proxied answers go out chunked, without Content-Length. */
  readonly chunkedReplies: boolean;
  malformedJson(text: string): Reply;
  missingField(field: string): Reply;
  /** `naturalTokens`: the answer's own length when the model ends by itself (context-rules.ts). */
  decide(
    promptTokens: number,
    requestedTokens: number | undefined,
    contextTokens: number,
    naturalTokens?: number,
  ): ContextVerdict;
  contextError(error: ContextError): Reply;
  /** An embeddings input over the context, or undefined when the kind accepts it. */
  embeddingsTooLong(promptTokens: number, contextTokens: number): Reply | undefined;
  /** The unified-KV failure before headers, and as an SSE event after them. */
  kvExhaustedReply(): Reply;
  kvExhaustedEvent(): SseEvent;
  newId(endpoint: InferenceEndpoint): string;
  /** `toolCall`: the answer is that call (chat only), generated as its arguments' JSON. */
  format(
    endpoint: 'chat' | 'completion',
    meta: CompletionMeta,
    includeUsage: boolean,
    toolCall?: ToolCallAnswer,
  ): GenerationFormat;
  /** How the kind reads a request's `encoding_format`: the encoding it answers in, or its refusal. */
  embeddingEncoding(value: unknown): EmbeddingEncoding | Reply;
  embeddings(answer: EmbeddingsAnswer): unknown;
  /** Request fields naming the output limit, first match wins. */
  maxTokenFields(endpoint: InferenceEndpoint): readonly string[];
  /** How the kind serves Anthropic's Messages API; absent = it does not (its route table has no such paths). */
  readonly anthropic?: AnthropicStyle;
}

export function sendReply(writer: ResponseWriter, reply: Reply, chunked: boolean): void {
  if (chunked) writer.replyChunked(reply);
  else writer.reply(reply);
}
