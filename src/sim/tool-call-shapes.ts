// A tool call in OpenAI's Chat Completions shapes, shared by the kinds that answer it the same way:
// the message's `tool_calls`, the streamed deltas (the first names the call, the rest carry pieces
// of its arguments, each with the call's `index`), and `finish_reason: "tool_calls"` when the model
// ended the call itself (a call cut by the limit keeps `length`).

import type { GenerationOutcome } from '#src/sim/model-engine.ts';
import type { ToolCallAnswer } from '#src/sim/scripted-answer.ts';

export function chatToolCalls(call: ToolCallAnswer, argumentsText: string): Record<string, unknown>[] {
  return [{ id: call.id, type: 'function', function: { name: call.name, arguments: argumentsText } }];
}

/** The delta for the arguments piece at `index`: the first one opens the call with its id and name. */
export function chatToolDelta(call: ToolCallAnswer, piece: string, index: number): Record<string, unknown> {
  if (index === 0) {
    return { tool_calls: [{ index: 0, id: call.id, type: 'function', function: { name: call.name, arguments: piece } }] };
  }
  return { tool_calls: [{ index: 0, function: { arguments: piece } }] };
}

/** The whole call in one delta, as servers that parse the call before sending it stream it (Ollama). */
export function chatWholeToolDelta(call: ToolCallAnswer, argumentsText: string): Record<string, unknown> {
  return { tool_calls: [{ index: 0, id: call.id, type: 'function', function: { name: call.name, arguments: argumentsText } }] };
}

export function chatFinishReason(outcome: GenerationOutcome, call: ToolCallAnswer | undefined): string {
  return call !== undefined && outcome.finishReason === 'stop' ? 'tool_calls' : outcome.finishReason;
}
