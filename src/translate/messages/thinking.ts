// Extended thinking, both ways. Asked: Anthropic's `thinking` → what the servers that reason read:
// `chat_template_kwargs.enable_thinking` (vLLM and llama-server pass it to the chat template: Qwen3,
// GLM, DeepSeek) and llama-server's `thinking_budget_tokens` (what its own Messages route makes of
// `budget_tokens`; vLLM ignores fields it does not know). Answered: a node's reasoning —
// `reasoning_content` (llama-server, older vLLM) or `reasoning` (vLLM ≥ 0.10) — is the thinking.

import { isRecord } from '#src/core/is-record.ts';
import { CannotCarry } from '../untranslatable.ts';

/** The node fields for the client's `thinking`; `off`: the client turned it off. */
export function thinkingFields(thinking: unknown): { readonly fields: Record<string, unknown>; readonly off: boolean } {
  if (thinking === undefined || thinking === null) return { fields: {}, off: false };
  if (!isRecord(thinking)) throw new CannotCarry('thinking', 'must be an object');
  switch (thinking.type) {
    case 'enabled': {
      const fields: Record<string, unknown> = { chat_template_kwargs: { enable_thinking: true } };
      if (typeof thinking.budget_tokens === 'number') fields.thinking_budget_tokens = thinking.budget_tokens;
      return { fields, off: false };
    }
    case 'adaptive':
      return { fields: { chat_template_kwargs: { enable_thinking: true } }, off: false };
    case 'disabled':
      return { fields: { chat_template_kwargs: { enable_thinking: false } }, off: true };
    default:
      throw new CannotCarry('thinking.type', 'must be enabled, adaptive or disabled');
  }
}

/** The reasoning text of a chat message or delta; undefined = none. */
export function reasoningOf(message: Readonly<Record<string, unknown>>): string | undefined {
  const text = typeof message.reasoning_content === 'string' ? message.reasoning_content : message.reasoning;
  return typeof text === 'string' && text !== '' ? text : undefined;
}
