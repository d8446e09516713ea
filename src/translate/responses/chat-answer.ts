// A node's whole chat completion → the client's `response` object. Its first choice's output, in
// the order a Responses model emits it: a `reasoning` item when the node answered reasoning
// (`reasoning_content`, or vLLM's newer `reasoning`), a `message` with the text, then one item per
// tool call. `finish_reason: length` → status `incomplete` (max_output_tokens). A chat `refusal`
// and logprobs are not carried. An answer without choices is a failed response, said so.

import { isRecord } from '#src/core/is-record.ts';
import type { JsonObject, TranslationContext } from '#src/translate/translation.ts';
import { clientToolOf, type ResponsesMemo } from '#src/translate/responses/memo.ts';
import {
  fallbackCallId,
  finishStatus,
  itemId,
  messageItem,
  outputText,
  reasoningItem,
  responseObject,
  responseUsage,
} from '#src/translate/responses/response-object.ts';
import { toolCallItem } from '#src/translate/responses/tool-call-item.ts';

/** The reasoning a chat message or delta carries (llama.cpp and older vLLM: `reasoning_content`; vLLM ≥ 0.10: `reasoning`). */
export function reasoningOf(message: Readonly<Record<string, unknown>>): string | undefined {
  const text = message['reasoning_content'] ?? message['reasoning'];
  return typeof text === 'string' && text !== '' ? text : undefined;
}

export function responseFromChat(nodeAnswer: JsonObject, memo: ResponsesMemo, context: TranslationContext): JsonObject {
  const choices = nodeAnswer['choices'];
  const choice = Array.isArray(choices) && isRecord(choices[0]) ? choices[0] : undefined;
  const message = choice !== undefined && isRecord(choice['message']) ? choice['message'] : undefined;
  const usage = responseUsage(nodeAnswer['usage']);
  if (choice === undefined || message === undefined) {
    const error = { code: 'server_error', message: 'the node answered a chat completion without a message' };
    return responseObject(memo, context, { status: 'failed', output: [], usage, error });
  }
  const { status, reason } = finishStatus(choice['finish_reason']);
  const output: JsonObject[] = [];
  const reasoning = reasoningOf(message);
  if (reasoning !== undefined) output.push(reasoningItem(itemId('rs', context, output.length), reasoning));
  const text = message['content'];
  if (typeof text === 'string' && text !== '')
    output.push(messageItem(itemId('msg', context, output.length), status, [outputText(text)]));
  const calls = Array.isArray(message['tool_calls']) ? message['tool_calls'].filter(isRecord) : [];
  for (const call of calls) {
    const fn = isRecord(call['function']) ? call['function'] : {};
    const outputIndex = output.length;
    const id = typeof call['id'] === 'string' && call['id'] !== '' ? call['id'] : fallbackCallId(context, outputIndex);
    const tool = clientToolOf(memo, typeof fn['name'] === 'string' ? fn['name'] : '');
    const argumentsText = typeof fn['arguments'] === 'string' ? fn['arguments'] : JSON.stringify(fn['arguments'] ?? {});
    output.push(toolCallItem(context, { tool, callId: id, outputIndex, argumentsText, status }));
  }
  return responseObject(memo, context, { status, output, usage, incompleteReason: reason });
}
