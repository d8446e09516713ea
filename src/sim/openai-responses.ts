// The OpenAI Responses API (`POST /v1/responses`) shapes, shared by every kind: a `response` object,
// and a stream of named events (`event:` + `data:`) that ends with `response.completed` and no
// `[DONE]`. A tool call is a `function_call` item whose arguments stream as
// `response.function_call_arguments.delta` events.

import type { CompletionMeta, GenerationFormat, StreamFormat } from '#src/sim/inference-dialect.ts';
import type { GenerationOutcome } from '#src/sim/model-engine.ts';
import type { SseEvent } from '#src/sim/reply.ts';
import type { ToolCallAnswer } from '#src/sim/scripted-answer.ts';

function outputText(text: string): { type: 'output_text'; text: string; annotations: never[] } {
  return { type: 'output_text', text, annotations: [] };
}

function messageItem(itemId: string, status: string, text: string | undefined): Record<string, unknown> {
  return {
    type: 'message',
    id: itemId,
    status,
    role: 'assistant',
    content: text === undefined ? [] : [outputText(text)],
  };
}

function functionCallItem(itemId: string, call: ToolCallAnswer, status: string, argumentsText: string): Record<string, unknown> {
  return { type: 'function_call', id: itemId, call_id: call.id, name: call.name, arguments: argumentsText, status };
}

function outputItem(itemId: string, call: ToolCallAnswer | undefined, outcome: GenerationOutcome): Record<string, unknown> {
  return call === undefined
    ? messageItem(itemId, 'completed', outcome.text)
    : functionCallItem(itemId, call, 'completed', outcome.text);
}

function responseObject(
  meta: CompletionMeta,
  itemId: string,
  outcome: GenerationOutcome | undefined,
  call: ToolCallAnswer | undefined,
): Record<string, unknown> {
  const incomplete = outcome?.finishReason === 'length';
  const status = outcome === undefined ? 'in_progress' : incomplete ? 'incomplete' : 'completed';
  return {
    id: meta.id,
    object: 'response',
    created_at: meta.created,
    status,
    error: null,
    incomplete_details: incomplete ? { reason: 'max_output_tokens' } : null,
    model: meta.model,
    output: outcome === undefined ? [] : [outputItem(itemId, call, outcome)],
    usage:
      outcome === undefined
        ? null
        : {
            input_tokens: outcome.promptTokens,
            output_tokens: outcome.completionTokens,
            total_tokens: outcome.promptTokens + outcome.completionTokens,
          },
  };
}

function streamFormat(meta: CompletionMeta, itemId: string, call: ToolCallAnswer | undefined): StreamFormat {
  let sequence = 0;
  const event = (type: string, fields: Record<string, unknown>): SseEvent => ({
    event: type,
    data: { type, sequence_number: sequence++, ...fields },
  });
  const at = { item_id: itemId, output_index: 0, content_index: 0 };
  const ended = (outcome: GenerationOutcome): SseEvent =>
    event(outcome.finishReason === 'length' ? 'response.incomplete' : 'response.completed', {
      response: responseObject(meta, itemId, outcome, call),
    });
  if (call !== undefined) {
    const where = { item_id: itemId, output_index: 0 };
    return {
      opening: () => [
        event('response.created', { response: responseObject(meta, itemId, undefined, call) }),
        event('response.output_item.added', { output_index: 0, item: functionCallItem(itemId, call, 'in_progress', '') }),
      ],
      token: (piece) => [event('response.function_call_arguments.delta', { ...where, delta: piece })],
      closing: (outcome) => [
        event('response.function_call_arguments.done', { ...where, arguments: outcome.text }),
        event('response.output_item.done', { output_index: 0, item: functionCallItem(itemId, call, 'completed', outcome.text) }),
        ended(outcome),
      ],
    };
  }
  return {
    opening: () => [
      event('response.created', { response: responseObject(meta, itemId, undefined, call) }),
      event('response.output_item.added', { output_index: 0, item: messageItem(itemId, 'in_progress', undefined) }),
      event('response.content_part.added', { ...at, part: outputText('') }),
    ],
    token: (piece) => [event('response.output_text.delta', { ...at, delta: piece })],
    closing: (outcome) => [
      event('response.output_text.done', { ...at, text: outcome.text }),
      event('response.content_part.done', { ...at, part: outputText(outcome.text) }),
      event('response.output_item.done', { output_index: 0, item: messageItem(itemId, 'completed', outcome.text) }),
      ended(outcome),
    ],
  };
}

export function responsesFormat(meta: CompletionMeta, call?: ToolCallAnswer): GenerationFormat {
  const itemId = `${call === undefined ? 'msg' : 'fc'}_${meta.id.replace(/^resp_/, '')}`;
  return {
    body: (outcome) => responseObject(meta, itemId, outcome, call),
    stream: () => streamFormat(meta, itemId, call),
  };
}
