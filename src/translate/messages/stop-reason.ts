// A Chat Completions choice's finish → Anthropic's stop_reason and stop_sequence: `stop` is
// end_turn, or stop_sequence when the node names the matched string (vLLM's `stop_reason`) and the
// client asked for it; `length` is max_tokens; `tool_calls` (and the older `function_call`) is
// tool_use; `content_filter` is refusal.

import type { MessagesMemo } from './memo.ts';

export interface StopReason {
  readonly stop_reason: string;
  readonly stop_sequence: string | null;
}

export function stopReason(finish: unknown, matched: unknown, memo: MessagesMemo): StopReason {
  switch (finish) {
    case 'length':
      return { stop_reason: 'max_tokens', stop_sequence: null };
    case 'tool_calls':
    case 'function_call':
      return { stop_reason: 'tool_use', stop_sequence: null };
    case 'content_filter':
      return { stop_reason: 'refusal', stop_sequence: null };
    default:
      return typeof matched === 'string' && memo.stopSequences.includes(matched)
        ? { stop_reason: 'stop_sequence', stop_sequence: matched }
        : { stop_reason: 'end_turn', stop_sequence: null };
  }
}
