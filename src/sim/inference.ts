// The flow every kind shares on chat, completions, embeddings and responses: check the request's
// required field, count its prompt with the sim tokenizer, apply the kind's context rule, then
// generate (or embed) on the target model's engine.

import { sleep, type Clock } from '#src/core/clock.ts';
import { requestedMaxTokens } from '#src/sim/context-rules.ts';
import type { SimExchange } from '#src/sim/exchange.ts';
import { sendReply, type CompletionMeta, type InferenceDialect, type InferenceEndpoint } from '#src/sim/inference-dialect.ts';
import type { ModelEngine } from '#src/sim/model-engine.ts';
import type { Reply } from '#src/sim/reply.ts';
import { responsesFormat } from '#src/sim/openai-responses.ts';
import type { RunningCompletions } from '#src/sim/running-completions.ts';
import { isRecord } from '#src/core/is-record.ts';
import { runGeneration } from '#src/sim/run-generation.ts';
import type { ResolvedModel } from '#src/sim/spec.ts';
import { embeddingVector } from '#src/sim/synthetic-output.ts';
import { encodeEmbedding, type EmbeddingEncoding } from '#src/sim/embedding-encoding.ts';
import { anthropicPromptTokens, chatPromptTokens, responsesPromptTokens, textPromptTokens } from '#src/sim/tokenizer.ts';
import { countTokensAnswer, messagesFormat } from '#src/sim/anthropic-messages.ts';
import {
  anthropicConversation,
  chatConversation,
  promptConversation,
  responsesConversation,
  type Conversation,
} from '#src/sim/conversation.ts';
import { answerPieces } from '#src/sim/scripted-answer.ts';

export interface InferenceTarget {
  readonly model: ResolvedModel;
  /** The `model` value answers carry. */
  readonly reportedModel: string;
  readonly engine: ModelEngine;
  /** llama-server's running completions by id (in-flight control); absent = the kind has no control route. */
  readonly running?: RunningCompletions | undefined;
}

/** The JSON object body, or undefined after answering with the kind's malformed-JSON error. */
export function jsonObjectBody(exchange: SimExchange, dialect: InferenceDialect): Record<string, unknown> | undefined {
  const { body } = exchange;
  if (body.kind === 'json' && isRecord(body.value)) return body.value;
  const text = body.kind === 'invalid' ? body.text : body.kind === 'empty' ? '' : JSON.stringify(body.value);
  const reply = dialect.malformedJson(text);
  sendReply(exchange.writer, reply, dialect.chunkedReplies);
  return undefined;
}

const REQUIRED_FIELD: Readonly<Record<InferenceEndpoint, string>> = {
  chat: 'messages',
  completion: 'prompt',
  embeddings: 'input',
  responses: 'input',
  messages: 'messages',
  count_tokens: 'messages',
  chat_tokens: 'messages',
  responses_tokens: 'input',
};

function promptTokensOf(endpoint: InferenceEndpoint, body: Readonly<Record<string, unknown>>): number {
  switch (endpoint) {
    case 'chat':
    case 'chat_tokens':
      return chatPromptTokens(body['messages']);
    case 'completion':
      return textPromptTokens(body['prompt']);
    case 'embeddings':
      return textPromptTokens(body['input']);
    case 'responses':
    case 'responses_tokens':
      return responsesPromptTokens(body['input'], body['instructions']);
    case 'messages':
    case 'count_tokens':
      return anthropicPromptTokens(body['system'], body['messages']);
  }
}

function conversationOf(endpoint: InferenceEndpoint, body: Readonly<Record<string, unknown>>): Conversation {
  switch (endpoint) {
    case 'responses':
      return responsesConversation(body);
    case 'messages':
    case 'count_tokens':
      return anthropicConversation(body);
    case 'chat':
      return chatConversation(body);
    default:
      return promptConversation(body['prompt']);
  }
}

/** The prompt as one text, in the order a chat template renders it (tools, system, turns): the prompt cache's key. */
function promptTextOf(endpoint: InferenceEndpoint, body: Readonly<Record<string, unknown>>): string {
  switch (endpoint) {
    case 'chat':
      return JSON.stringify([body['tools'] ?? null, body['messages']]);
    case 'responses':
      return JSON.stringify([body['tools'] ?? null, body['instructions'] ?? null, body['input']]);
    case 'messages':
    case 'count_tokens':
      return JSON.stringify([body['tools'] ?? null, body['system'] ?? null, body['messages']]);
    default:
      return typeof body['prompt'] === 'string' ? body['prompt'] : JSON.stringify(body['prompt']);
  }
}

function hasRequiredField(endpoint: InferenceEndpoint, body: Readonly<Record<string, unknown>>): boolean {
  const value = body[REQUIRED_FIELD[endpoint]];
  if (endpoint === 'chat' || endpoint === 'chat_tokens' || endpoint === 'messages' || endpoint === 'count_tokens')
    return Array.isArray(value);
  return typeof value === 'string' || Array.isArray(value);
}

/** Each embeddings input as text (token-id arrays become their ids joined), one vector each. */
function embeddingInputs(input: unknown): string[] {
  if (typeof input === 'string') return [input];
  if (!Array.isArray(input)) return [];
  if (input.every((item) => typeof item === 'number')) return [input.join(' ')];
  return input.map((item) => (typeof item === 'string' ? item : JSON.stringify(item)));
}

async function answerEmbeddings(
  exchange: SimExchange,
  body: Readonly<Record<string, unknown>>,
  promptTokens: number,
  meta: CompletionMeta,
  dialect: InferenceDialect,
  encoding: EmbeddingEncoding,
  timing: { readonly ttftMs: number; readonly clock: Clock },
): Promise<void> {
  const { ttftMs, clock } = timing;
  try {
    await sleep(clock, ttftMs, exchange.signal);
  } catch {
    return;
  }
  const requested = body['model'];
  const answer = dialect.embeddings({
    meta,
    requestedModel: typeof requested === 'string' ? requested : undefined,
    vectors: embeddingInputs(body['input']).map((text) => encodeEmbedding(embeddingVector(text), encoding)),
    encoding,
    promptTokens,
  });
  sendReply(exchange.writer, dialect.json(200, answer), dialect.chunkedReplies);
}

export async function handleInference(
  exchange: SimExchange,
  endpoint: InferenceEndpoint,
  body: Readonly<Record<string, unknown>>,
  target: InferenceTarget,
  dialect: InferenceDialect,
  clock: Clock,
): Promise<void> {
  const anthropic = endpoint === 'messages' || endpoint === 'count_tokens' ? dialect.anthropic : undefined;
  const send = (reply: Reply): void =>
    sendReply(
      exchange.writer,
      anthropic === undefined || reply.status < 400 ? reply : anthropic.error(reply),
      dialect.chunkedReplies,
    );
  if (!hasRequiredField(endpoint, body)) {
    send(dialect.missingField(REQUIRED_FIELD[endpoint]));
    return;
  }
  const promptTokens = promptTokensOf(endpoint, body);
  const contextTokens = target.model.contextTokens;
  const meta: CompletionMeta = {
    id: dialect.newId(endpoint),
    created: Math.floor(clock.now() / 1000),
    model: target.reportedModel,
  };
  // A count tokenizes only: no context rule, no generation.
  if (endpoint === 'count_tokens') return send(dialect.json(200, countTokensAnswer(promptTokens)));
  // llama-server's OpenAI-style counts name their object (handle_count_tokens).
  if (endpoint === 'chat_tokens' || endpoint === 'responses_tokens')
    return send(dialect.json(200, { input_tokens: promptTokens, object: 'response.input_tokens' }));
  if (endpoint === 'embeddings') {
    const encoding = dialect.embeddingEncoding(body['encoding_format']);
    if (typeof encoding !== 'string') return send(encoding);
    const tooLong = dialect.embeddingsTooLong(promptTokens, contextTokens);
    if (tooLong !== undefined) send(tooLong);
    else
      await answerEmbeddings(exchange, body, promptTokens, meta, dialect, encoding, {
        ttftMs: target.engine.settings.ttftMs,
        clock,
      });
    return;
  }
  const requested = requestedMaxTokens(body, dialect.maxTokenFields(endpoint));
  const { toolCall, pieces } = answerPieces(conversationOf(endpoint, body), target.engine.settings.answers ?? 'fill');
  const verdict = dialect.decide(promptTokens, requested, contextTokens, pieces?.length);
  if (!verdict.ok) {
    send(dialect.contextError(verdict.error));
    return;
  }
  const plan = {
    ...verdict.plan,
    ...(pieces === undefined ? {} : { pieces }),
    ...(target.engine.settings.prefixCacheTtftMs === undefined ? {} : { promptText: promptTextOf(endpoint, body) }),
  };
  const streamOptions = body['stream_options'];
  const includeUsage = isRecord(streamOptions) && streamOptions['include_usage'] === true;
  const format =
    endpoint === 'responses'
      ? responsesFormat(meta, toolCall)
      : anthropic !== undefined
        ? messagesFormat(meta, anthropic, promptTokens, toolCall)
        : dialect.format(endpoint === 'completion' ? 'completion' : 'chat', meta, includeUsage, toolCall);
  const ended = target.running?.start(meta.id, body['reasoning_control'] === true);
  try {
    await runGeneration(exchange, target.engine, plan, format, body['stream'] === true, dialect);
  } finally {
    ended?.();
  }
}
