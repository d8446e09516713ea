// A Chat Completions event stream → Anthropic's, in its order: message_start, then per content block
// content_block_start, its deltas (thinking_delta, text_delta, input_json_delta) and
// content_block_stop (a ping after the first block's start), then message_delta with the
// stop_reason and the usage (the node's usage chunk, asked for by the request), and message_stop.
// A block closes when the node moves on to another kind of output or another tool call. A node's
// in-stream error, or a stream broken after the client had bytes, ends in `event: error`.

import { isRecord } from '#src/core/is-record.ts';
import type { StreamTranslator, TranslationContext } from '../translation.ts';
import { anthropicError } from './error-shape.ts';
import type { MessagesMemo } from './memo.ts';
import { messageId } from './message-answer.ts';
import { messageUsage, NO_USAGE } from './message-usage.ts';
import { stopReason } from './stop-reason.ts';
import { reasoningOf } from './thinking.ts';

/** One client event as SSE text. */
export function sseEvent(type: string, data: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}

type OpenBlock =
  | { readonly kind: 'thinking' | 'text'; readonly index: number }
  | { readonly kind: 'tool'; readonly index: number; readonly toolIndex: number };

export class MessageStream implements StreamTranslator {
  readonly #memo: MessagesMemo;
  readonly #context: TranslationContext;
  #started = false;
  #pinged = false;
  #over = false;
  #block: OpenBlock | undefined;
  #blocks = 0;
  #toolCalls = 0;
  #finish: unknown;
  #matched: unknown;
  #usage: unknown;

  constructor(memo: MessagesMemo, context: TranslationContext) {
    this.#memo = memo;
    this.#context = context;
  }

  event(data: string): string {
    if (this.#over) return '';
    if (data.trim() === '[DONE]') return this.#close();
    let chunk: unknown;
    try {
      chunk = JSON.parse(data);
    } catch {
      return '';
    }
    if (!isRecord(chunk)) return '';
    if (chunk.error !== undefined) {
      this.#over = true;
      const message =
        isRecord(chunk.error) && typeof chunk.error.message === 'string' ? chunk.error.message : String(chunk.error);
      return this.#start() + errorEvent(message);
    }
    let out = this.#start();
    if (isRecord(chunk.usage)) this.#usage = chunk.usage;
    const choice = Array.isArray(chunk.choices) && isRecord(chunk.choices[0]) ? chunk.choices[0] : undefined;
    if (choice === undefined) return out;
    const delta = isRecord(choice.delta) ? choice.delta : {};
    const reasoning = this.#memo.thinkingOff ? undefined : reasoningOf(delta);
    if (reasoning !== undefined)
      out += this.#into('thinking') + delta_(this.#blockIndex(), { type: 'thinking_delta', thinking: reasoning });
    if (typeof delta.content === 'string' && delta.content !== '')
      out += this.#into('text') + delta_(this.#blockIndex(), { type: 'text_delta', text: delta.content });
    if (Array.isArray(delta.tool_calls)) for (const call of delta.tool_calls) if (isRecord(call)) out += this.#toolDelta(call);
    if (choice.finish_reason !== undefined && choice.finish_reason !== null) {
      this.#finish = choice.finish_reason;
      this.#matched = choice.stop_reason;
    }
    return out;
  }

  end(): string {
    return this.#close();
  }

  fail(message: string): string {
    if (this.#over) return '';
    this.#over = true;
    return errorEvent(message);
  }

  #start(): string {
    if (this.#started) return '';
    this.#started = true;
    const message = {
      id: messageId(this.#context),
      type: 'message',
      role: 'assistant',
      model: this.#context.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...NO_USAGE, output_tokens: 0 },
    };
    return sseEvent('message_start', { message });
  }

  #blockIndex(): number {
    return this.#block?.index ?? 0;
  }

  /** Makes the open block one of `kind` (closing another), with its start event when it is new. */
  #into(kind: 'thinking' | 'text'): string {
    if (this.#block?.kind === kind) return '';
    const out = this.#closeBlock();
    const index = this.#blocks++;
    this.#block = { kind, index };
    const block = kind === 'text' ? { type: 'text', text: '' } : { type: 'thinking', thinking: '', signature: '' };
    return out + this.#opened(index, block);
  }

  #toolDelta(call: Readonly<Record<string, unknown>>): string {
    const fn = isRecord(call.function) ? call.function : {};
    const toolIndex = typeof call.index === 'number' ? call.index : this.#toolCalls;
    let out = '';
    const open = this.#block;
    if (open?.kind !== 'tool' || open.toolIndex !== toolIndex) {
      out += this.#closeBlock();
      const index = this.#blocks++;
      this.#toolCalls += 1;
      this.#block = { kind: 'tool', index, toolIndex };
      const id =
        typeof call.id === 'string' && call.id !== '' ? call.id : `toolu_${messageId(this.#context).slice(4)}_${toolIndex}`;
      const name = typeof fn.name === 'string' ? fn.name : '';
      out += this.#opened(index, { type: 'tool_use', id, name, input: {} });
    }
    if (typeof fn.arguments === 'string' && fn.arguments !== '')
      out += delta_(this.#blockIndex(), { type: 'input_json_delta', partial_json: fn.arguments });
    return out;
  }

  #opened(index: number, block: Record<string, unknown>): string {
    let out = sseEvent('content_block_start', { index, content_block: block });
    if (!this.#pinged) {
      this.#pinged = true;
      out += sseEvent('ping', {});
    }
    return out;
  }

  #closeBlock(): string {
    const open = this.#block;
    if (open === undefined) return '';
    this.#block = undefined;
    return sseEvent('content_block_stop', { index: open.index });
  }

  /** The closing events the client is owed, once. */
  #close(): string {
    if (this.#over) return '';
    const out = this.#start() + this.#closeBlock();
    this.#over = true;
    const stop = stopReason(this.#finish, this.#matched, this.#memo);
    const reason = this.#toolCalls > 0 && stop.stop_reason === 'end_turn' ? 'tool_use' : stop.stop_reason;
    const usage = messageUsage(this.#usage);
    return (
      out +
      sseEvent('message_delta', { delta: { stop_reason: reason, stop_sequence: stop.stop_sequence }, usage }) +
      sseEvent('message_stop', {})
    );
  }
}

function delta_(index: number, delta: Record<string, unknown>): string {
  return sseEvent('content_block_delta', { index, delta });
}

function errorEvent(message: string): string {
  return `event: error\ndata: ${JSON.stringify(anthropicError(500, message))}\n\n`;
}
