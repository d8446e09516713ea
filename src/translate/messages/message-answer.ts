// A whole Chat Completions answer → an Anthropic `message`: the first choice's reasoning as a
// thinking block, its text as a text block, its tool calls as tool_use blocks (arguments parsed
// back into `input`), then stop_reason and usage. The id derives from the gateway's request id.

import { isRecord } from '#src/core/is-record.ts';
import type { JsonObject, TranslationContext } from '../translation.ts';
import type { MessagesMemo } from './memo.ts';
import { messageUsage } from './message-usage.ts';
import { stopReason } from './stop-reason.ts';
import { reasoningOf } from './thinking.ts';

export function messageId(context: TranslationContext): string {
  return `msg_${context.requestId.replace(/[^A-Za-z0-9_-]/g, '')}`;
}

/** A tool call's arguments as the tool_use block's `input`: the parsed object, or the text kept under `arguments` when it is not one. */
export function toolInput(args: unknown): Record<string, unknown> {
  if (typeof args !== 'string' || args.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(args);
    return isRecord(parsed) ? { ...parsed } : { arguments: parsed };
  } catch {
    return { arguments: args };
  }
}

export function messageAnswer(answer: JsonObject, memo: MessagesMemo, context: TranslationContext): JsonObject {
  const choice = Array.isArray(answer.choices) && isRecord(answer.choices[0]) ? answer.choices[0] : {};
  const message = isRecord(choice.message) ? choice.message : {};
  const content: JsonObject[] = [];
  const reasoning = memo.thinkingOff ? undefined : reasoningOf(message);
  if (reasoning !== undefined) content.push({ type: 'thinking', thinking: reasoning, signature: '' });
  if (typeof message.content === 'string' && message.content !== '') content.push({ type: 'text', text: message.content });
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls : [];
  calls.forEach((call: unknown, i) => {
    if (!isRecord(call)) return;
    const fn = isRecord(call.function) ? call.function : {};
    content.push({
      type: 'tool_use',
      id: typeof call.id === 'string' && call.id !== '' ? call.id : `toolu_${messageId(context).slice(4)}_${i}`,
      name: typeof fn.name === 'string' ? fn.name : '',
      input: toolInput(fn.arguments),
    });
  });
  const stop = stopReason(choice.finish_reason, choice.stop_reason, memo);
  return {
    id: messageId(context),
    type: 'message',
    role: 'assistant',
    model: context.model,
    content,
    stop_reason: calls.length > 0 && stop.stop_reason === 'end_turn' ? 'tool_use' : stop.stop_reason,
    stop_sequence: stop.stop_sequence,
    usage: messageUsage(answer.usage),
  };
}
