// Anthropic's Messages API (`POST /v1/messages`, `POST /v1/messages/count_tokens`) as llama-server,
// vLLM and Ollama serve it (docs/protocols-endpoints.md): the request is a chat (system + messages +
// tools), the answer a `message` object, the stream named events in this order — message_start,
// content_block_start, content_block_delta per token, content_block_stop, message_delta (with the
// usage), message_stop — with no `[DONE]` and no `ping` (none of the three sends one). Errors are
// each kind's own (`AnthropicStyle.error`): llama-server keeps its OpenAI-style bodies, vLLM and
// Ollama wrap theirs in {"type":"error","error":{...}}.

import type { AnthropicStyle, CompletionMeta, GenerationFormat } from '#src/sim/inference-dialect.ts';

export type { AnthropicStyle } from '#src/sim/inference-dialect.ts';
import type { GenerationOutcome } from '#src/sim/model-engine.ts';
import type { Reply, SseEvent } from '#src/sim/reply.ts';
import type { ToolCallAnswer } from '#src/sim/scripted-answer.ts';

function stopReason(outcome: GenerationOutcome, call: ToolCallAnswer | undefined): string {
  return outcome.finishReason === 'length' ? 'max_tokens' : call === undefined ? 'end_turn' : 'tool_use';
}

/** A cut call's arguments may not parse: the block then carries what parses, an empty input. */
function parsedInput(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return {};
  }
}

function message(
  meta: CompletionMeta,
  style: AnthropicStyle,
  content: unknown[],
  outcome: GenerationOutcome | undefined,
  promptTokens: number,
  call: ToolCallAnswer | undefined,
): Record<string, unknown> {
  const head: Record<string, unknown> = { id: meta.id, type: 'message', role: 'assistant' };
  const stop = outcome === undefined ? null : stopReason(outcome, call);
  const body: Record<string, unknown> = style.modelFirst
    ? { ...head, model: meta.model, content }
    : { ...head, content, model: meta.model };
  if (!style.omitsStopSequence || stop !== null) body['stop_reason'] = stop;
  if (!style.omitsStopSequence) body['stop_sequence'] = null;
  body['usage'] = { input_tokens: promptTokens, output_tokens: outcome?.completionTokens ?? 0 };
  return body;
}

function event(type: string, fields: Record<string, unknown>): SseEvent {
  return { event: type, data: { type, ...fields } };
}

/** The answer's one content block: its text, or the tool call (`tool_use`, with its parsed input). */
function block(call: ToolCallAnswer | undefined, text: string): Record<string, unknown> {
  return call === undefined
    ? { type: 'text', text }
    : { type: 'tool_use', id: call.id, name: call.name, input: parsedInput(text) };
}

/** Anthropic names tool calls `toolu_…`; the sims keep the scripted id's digits. */
function anthropicCall(call: ToolCallAnswer | undefined): ToolCallAnswer | undefined {
  return call === undefined ? undefined : { ...call, id: call.id.replace(/^call_/, 'toolu_') };
}

/**
 * The `message` answer and its event stream, for a prompt of `promptTokens`; a tool call streams
 * as a `tool_use` block (input `{}` at its start) whose JSON arrives in `input_json_delta` pieces.
 */
export function messagesFormat(
  meta: CompletionMeta,
  style: AnthropicStyle,
  promptTokens: number,
  toolCall?: ToolCallAnswer,
): GenerationFormat {
  const call = anthropicCall(toolCall);
  return {
    body: (outcome) => message(meta, style, [block(call, outcome.text)], outcome, promptTokens, call),
    stream: () => ({
      opening: () => [
        event('message_start', { message: message(meta, style, [], undefined, promptTokens, call) }),
        event('content_block_start', {
          index: 0,
          content_block:
            call === undefined ? { type: 'text', text: '' } : { type: 'tool_use', id: call.id, name: call.name, input: {} },
        }),
      ],
      token: (piece) => [
        event('content_block_delta', {
          index: 0,
          delta: call === undefined ? { type: 'text_delta', text: piece } : { type: 'input_json_delta', partial_json: piece },
        }),
      ],
      closing: (outcome) => [
        event('content_block_stop', { index: 0 }),
        event('message_delta', {
          delta: style.omitsStopSequence
            ? { stop_reason: stopReason(outcome, call) }
            : { stop_reason: stopReason(outcome, call), stop_sequence: null },
          usage: style.deltaInputTokens
            ? { input_tokens: promptTokens, output_tokens: outcome.completionTokens }
            : { output_tokens: outcome.completionTokens },
        }),
        event('message_stop', {}),
      ],
    }),
  };
}

/** The count_tokens answer. */
export function countTokensAnswer(promptTokens: number): { input_tokens: number } {
  return { input_tokens: promptTokens };
}

/** `{"type":"error","error":{"type","message"}}` from an OpenAI-style error reply (vLLM's translate_error_response). */
export function wrappedError(
  reply: Reply,
  type: (status: number, inner: string | undefined) => string,
  extra: Readonly<Record<string, unknown>> = {},
): Reply {
  let inner: { type?: unknown; message?: unknown } = {};
  try {
    const parsed: unknown = JSON.parse(reply.body);
    const error = typeof parsed === 'object' && parsed !== null ? (parsed as { error?: unknown }).error : undefined;
    if (typeof error === 'object' && error !== null) inner = error as typeof inner;
    else if (typeof error === 'string') inner = { message: error };
  } catch {
    inner = { message: reply.body };
  }
  const message = typeof inner.message === 'string' ? inner.message : reply.body;
  const body = {
    type: 'error',
    error: { type: type(reply.status, typeof inner.type === 'string' ? inner.type : undefined), message },
    ...extra,
  };
  return { ...reply, body: JSON.stringify(body) };
}
