// A chat tool call → the client's output item: a `function_call` (with its `namespace` when the
// client declared the function in one) or, for a custom tool, a `custom_tool_call` whose free-form
// `input` is the one string argument its chat function was given.

import { isRecord } from '#src/core/is-record.ts';
import type { JsonObject, TranslationContext } from '#src/translate/translation.ts';
import { CUSTOM_INPUT, type ClientTool } from '#src/translate/responses/memo.ts';
import { itemId } from '#src/translate/responses/response-object.ts';

/** A custom tool's input from its chat arguments (`{"input": "…"}`); arguments that are not that shape are the input themselves. */
export function customInput(argumentsText: string): string {
  try {
    const parsed: unknown = JSON.parse(argumentsText);
    const input = isRecord(parsed) ? parsed[CUSTOM_INPUT] : undefined;
    if (typeof input === 'string') return input;
  } catch {
    // Not JSON: the model wrote the input bare.
  }
  return argumentsText;
}

export interface CallItemInit {
  readonly tool: ClientTool;
  readonly callId: string;
  readonly outputIndex: number;
  /** The arguments text so far (the whole text once done; a custom tool's is read only then). */
  readonly argumentsText: string;
  readonly status: 'in_progress' | 'completed' | 'incomplete';
}

export function toolCallItem(context: TranslationContext, init: CallItemInit): JsonObject {
  const { tool, callId, outputIndex, argumentsText, status } = init;
  if (tool.kind === 'custom') {
    const item: JsonObject = {
      type: 'custom_tool_call',
      id: itemId('ctc', context, outputIndex),
      call_id: callId,
      name: tool.name,
    };
    if (tool.namespace !== undefined) item['namespace'] = tool.namespace;
    // The input streams whole at the end (its JSON wrapping cannot be undone piece by piece).
    item['input'] = status === 'in_progress' ? '' : customInput(argumentsText);
    item['status'] = status;
    return item;
  }
  const item: JsonObject = { type: 'function_call', id: itemId('fc', context, outputIndex), call_id: callId, name: tool.name };
  if (tool.namespace !== undefined) item['namespace'] = tool.namespace;
  item['arguments'] = argumentsText;
  item['status'] = status;
  return item;
}
