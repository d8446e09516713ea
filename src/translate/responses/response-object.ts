// The `response` object a Responses client reads, built from what a chat node answered: the same
// for a whole answer and for a stream's `response.created` / `response.completed`, so both agree.
// Ids derive from the gateway's request id (`resp_…`, and per output item `rs_`, `msg_`, `fc_`,
// `ctc_` + the output index); times from the gateway's clock.

import { isRecord } from '#src/core/is-record.ts';
import type { JsonObject, TranslationContext } from '#src/translate/translation.ts';
import type { ResponsesMemo } from '#src/translate/responses/memo.ts';

export type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed';

/** The request id as an id suffix: letters and digits only (a client's `x-request-id` may hold `-`, `.`, `:`…). */
function idBase(context: TranslationContext): string {
  const base = context.requestId.replace(/[^A-Za-z0-9]/g, '');
  return base === '' ? '0' : base;
}

export function responseId(context: TranslationContext): string {
  return `resp_${idBase(context)}`;
}

/** An output item's id: its kind's prefix, the request, its output index. */
export function itemId(prefix: 'rs' | 'msg' | 'fc' | 'ctc', context: TranslationContext, outputIndex: number): string {
  return `${prefix}_${idBase(context)}_${outputIndex}`;
}

/** A tool call id for a node call that came without one. */
export function fallbackCallId(context: TranslationContext, outputIndex: number): string {
  return `call_${idBase(context)}_${outputIndex}`;
}

const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);

/** The node's chat `usage` → Responses `usage` (null when the node gave none). */
export function responseUsage(usage: unknown): JsonObject | null {
  if (!isRecord(usage)) return null;
  const input = count(usage['prompt_tokens']);
  const output = count(usage['completion_tokens']);
  const promptDetails = usage['prompt_tokens_details'];
  const completionDetails = usage['completion_tokens_details'];
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: isRecord(promptDetails) ? count(promptDetails['cached_tokens']) : 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: isRecord(completionDetails) ? count(completionDetails['reasoning_tokens']) : 0 },
    total_tokens: typeof usage['total_tokens'] === 'number' ? usage['total_tokens'] : input + output,
  };
}

/** The status a chat `finish_reason` gives the response, and why it is incomplete. */
export function finishStatus(finishReason: unknown): { status: 'completed' | 'incomplete'; reason: string | null } {
  if (finishReason === 'length') return { status: 'incomplete', reason: 'max_output_tokens' };
  if (finishReason === 'content_filter') return { status: 'incomplete', reason: 'content_filter' };
  return { status: 'completed', reason: null };
}

export interface ResponseState {
  readonly status: ResponseStatus;
  readonly output: readonly JsonObject[];
  readonly usage: JsonObject | null;
  /** Why the response is incomplete (`max_output_tokens`, `content_filter`). */
  readonly incompleteReason?: string | null;
  /** Why it failed: Responses' `{code, message}`. */
  readonly error?: JsonObject | null;
}

/** The whole `response` object. */
export function responseObject(memo: ResponsesMemo, context: TranslationContext, state: ResponseState): JsonObject {
  const reason = state.incompleteReason ?? null;
  return {
    id: responseId(context),
    object: 'response',
    created_at: context.nowSeconds,
    status: state.status,
    background: false,
    error: state.error ?? null,
    incomplete_details: reason === null ? null : { reason },
    model: context.model,
    output: state.output,
    ...memo.echo,
    usage: state.usage,
  };
}

// ── Output items ────────────────────────────────────────────────────────────────────────────

export const reasoningItem = (id: string, text: string): JsonObject => ({
  type: 'reasoning',
  id,
  summary: [],
  content: [{ type: 'reasoning_text', text }],
});

export const outputText = (text: string): JsonObject => ({ type: 'output_text', text, annotations: [], logprobs: [] });

export const messageItem = (id: string, status: string, content: readonly JsonObject[]): JsonObject => ({
  type: 'message',
  id,
  status,
  role: 'assistant',
  content,
});
