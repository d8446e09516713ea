// Ollama's native inference API as ollama/ollama serves it (api/types.go, server/routes.go;
// docs/protocols-endpoints.md): `/api/chat` and `/api/generate` stream NDJSON by default
// (`application/x-ndjson`, one object a line, `done: true` last with the counts) unless
// `"stream": false`; `/api/embed` answers `embeddings` (one vector per input) with
// `prompt_eval_count`; the legacy `/api/embeddings` answers one `embedding`. Errors are
// `{"error": "..."}`. Keys in Go's struct order: model, created_at, message|response, done,
// done_reason, (context), then the durations and counts.

import type { Clock } from '#src/core/clock.ts';
import { sleep } from '#src/core/clock.ts';
import { isRecord } from '#src/core/is-record.ts';
import type { SimExchange } from '#src/sim/exchange.ts';
import { decideOllama } from '#src/sim/context-rules.ts';
import type { GenerationOutcome, ModelEngine } from '#src/sim/model-engine.ts';
import { chatPromptTokens, textPromptTokens, tokenIds } from '#src/sim/tokenizer.ts';
import { embeddingVector } from '#src/sim/synthetic-output.ts';
import { ollamaJson } from '#src/sim/kinds/ollama-dialect.ts';
import type { Reply } from '#src/sim/reply.ts';
import { chatConversation, promptConversation } from '#src/sim/conversation.ts';
import { answerPieces, type ToolCallAnswer } from '#src/sim/scripted-answer.ts';

export type NativeEndpoint = 'chat' | 'generate' | 'embed' | 'embeddings';

export const NATIVE_PATHS: Readonly<Record<string, NativeEndpoint>> = {
  '/api/chat': 'chat',
  '/api/generate': 'generate',
  '/api/embed': 'embed',
  '/api/embeddings': 'embeddings',
};

const NDJSON_HEADERS: Readonly<Record<string, string>> = { 'Content-Type': 'application/x-ndjson' };

/** `{"error": "..."}` with the status. */
export function ollamaError(status: number, message: string): Reply {
  return ollamaJson(status, { error: message });
}

/** `/api/chat`'s tool_calls: the arguments as an object (a cut call's arguments: `{}`). */
function nativeToolCalls(call: ToolCallAnswer, argumentsText: string): Record<string, unknown>[] {
  let args: unknown = {};
  try {
    args = JSON.parse(argumentsText);
  } catch {
    args = {};
  }
  return [{ id: call.id, function: { index: 0, name: call.name, arguments: args } }];
}

export interface NativeTarget {
  readonly reportedModel: string;
  readonly engine: ModelEngine;
  readonly contextTokens: number;
}

const NS_PER_MS = 1_000_000;

function metrics(outcome: GenerationOutcome): Record<string, number> {
  return {
    total_duration: Math.round((outcome.promptMs + outcome.predictedMs) * NS_PER_MS),
    load_duration: 0,
    prompt_eval_count: outcome.promptTokens,
    prompt_eval_duration: Math.round(outcome.promptMs * NS_PER_MS),
    eval_count: outcome.completionTokens,
    eval_duration: Math.round(outcome.predictedMs * NS_PER_MS),
  };
}

/** `options.num_predict`: the output limit (negative = unbounded). */
function numPredict(body: Readonly<Record<string, unknown>>): number | undefined {
  const options = body['options'];
  const value = isRecord(options) ? options['num_predict'] : undefined;
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;
}

function embedInputs(input: unknown): string[] {
  if (typeof input === 'string') return [input];
  return Array.isArray(input) ? input.map((item) => (typeof item === 'string' ? item : JSON.stringify(item))) : [];
}

async function embed(
  exchange: SimExchange,
  endpoint: 'embed' | 'embeddings',
  body: Readonly<Record<string, unknown>>,
  target: NativeTarget,
  clock: Clock,
): Promise<void> {
  const inputs = endpoint === 'embed' ? embedInputs(body['input']) : [typeof body['prompt'] === 'string' ? body['prompt'] : ''];
  const promptTokens = inputs.reduce((sum, text) => sum + tokenIds(text).length, 0);
  try {
    await sleep(clock, target.engine.settings.ttftMs, exchange.signal);
  } catch {
    return;
  }
  if (endpoint === 'embeddings') {
    exchange.writer.reply(ollamaJson(200, { embedding: embeddingVector(inputs[0] ?? '') }));
    return;
  }
  const ms = target.engine.settings.ttftMs * NS_PER_MS;
  exchange.writer.reply(
    ollamaJson(200, {
      model: target.reportedModel,
      embeddings: inputs.map(embeddingVector),
      total_duration: ms,
      load_duration: 0,
      prompt_eval_count: promptTokens,
    }),
  );
}

/** One native inference request on a loaded model. */
export async function handleNative(
  exchange: SimExchange,
  endpoint: NativeEndpoint,
  body: Readonly<Record<string, unknown>>,
  target: NativeTarget,
  clock: Clock,
): Promise<void> {
  if (endpoint === 'embed' || endpoint === 'embeddings') return embed(exchange, endpoint, body, target, clock);
  const chat = endpoint === 'chat';
  if (chat && body['messages'] !== undefined && !Array.isArray(body['messages'])) {
    exchange.writer.reply(ollamaError(400, 'json: cannot unmarshal messages'));
    return;
  }
  const promptTokens = chat
    ? chatPromptTokens(body['messages'] ?? [])
    : textPromptTokens(
        `${typeof body['system'] === 'string' ? body['system'] : ''}${typeof body['prompt'] === 'string' ? body['prompt'] : ''}`,
      );
  const conversation = chat ? chatConversation(body) : promptConversation(body['prompt']);
  const { toolCall, pieces } = answerPieces(conversation, target.engine.settings.answers ?? 'fill');
  const verdict = decideOllama(promptTokens, numPredict(body), target.contextTokens, pieces?.length);
  if (!verdict.ok) return;
  const plan = pieces === undefined ? verdict.plan : { ...verdict.plan, pieces };
  const call = chat ? toolCall : undefined;
  const stream = body['stream'] !== false;
  const { writer, signal } = exchange;
  const createdAt = (): string => new Date(clock.now()).toISOString();
  const head = (): Record<string, unknown> => ({ model: target.reportedModel, created_at: createdAt() });
  const piece = (text: string): Record<string, unknown> =>
    chat ? { message: { role: 'assistant', content: text } } : { response: text };
  // A call is parsed out of the output and sent whole (arguments as an object), never as text.
  const callMessage = (outcome: GenerationOutcome): Record<string, unknown> => ({
    message: { role: 'assistant', content: '', tool_calls: call === undefined ? [] : nativeToolCalls(call, outcome.text) },
  });
  const final = (outcome: GenerationOutcome, text: string): Record<string, unknown> => ({
    ...head(),
    ...(call !== undefined && !stream ? callMessage(outcome) : piece(call === undefined ? text : '')),
    done: true,
    done_reason: outcome.finishReason === 'length' ? 'length' : 'stop',
    ...(chat ? {} : { context: tokenIds(outcome.text).slice(0, 8) }),
    ...metrics(outcome),
  });
  let opened = false;
  const open = (): void => {
    if (opened) return;
    opened = true;
    writer.openStream(200, NDJSON_HEADERS);
  };
  await new Promise<void>((resolve) => {
    let cancel: (() => void) | undefined;
    const onAbort = (): void => {
      cancel?.();
      resolve();
    };
    const done = (): void => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    };
    if (signal.aborted) return resolve();
    signal.addEventListener('abort', onAbort, { once: true });
    cancel = target.engine.submit(plan, {
      token(text) {
        if (!stream || call !== undefined) return;
        open();
        writer.line({ ...head(), ...piece(text), done: false });
      },
      finished(outcome) {
        if (stream) {
          open();
          if (call !== undefined) writer.line({ ...head(), ...callMessage(outcome), done: false });
          writer.line(final(outcome, ''));
          writer.endStream();
        } else {
          writer.reply(ollamaJson(200, final(outcome, outcome.text)));
        }
        done();
      },
      failed() {
        if (opened) {
          writer.line({ error: 'runner failure' });
          writer.endStream();
        } else writer.reply(ollamaError(500, 'runner failure'));
        done();
      },
    });
  });
}
