// A node's chat completion stream → the Responses event stream, one translator per answer:
// `response.created`, `response.in_progress`; per output item `response.output_item.added`, its
// parts and deltas (`response.reasoning_text.*` for the node's reasoning, `response.content_part.*`
// and `response.output_text.*` for its text, `response.function_call_arguments.*` for a function
// call's arguments, `response.custom_tool_call_input.*` for a custom tool's input — whole, at the
// end, since its JSON wrapping cannot be undone piece by piece), `response.output_item.done`; then
// `response.completed` (or `response.incomplete` when the node stopped at its token limit), each
// event with its `sequence_number`. The closing events wait for `[DONE]` (or the end of the stream),
// because the usage chunk comes after the finish reason. A failure is `response.failed` (what
// Codex reads) followed by an `error` event (what the openai SDK throws on).

import { isRecord } from '#src/core/is-record.ts';
import type { JsonObject, StreamTranslator, TranslationContext } from '#src/translate/translation.ts';
import { reasoningOf } from '#src/translate/responses/chat-answer.ts';
import { clientToolOf, type ClientTool, type ResponsesMemo } from '#src/translate/responses/memo.ts';
import {
  fallbackCallId,
  finishStatus,
  itemId,
  messageItem,
  outputText,
  reasoningItem,
  responseObject,
  responseUsage,
  type ResponseState,
} from '#src/translate/responses/response-object.ts';
import { customInput, toolCallItem } from '#src/translate/responses/tool-call-item.ts';

/** One output item being streamed. */
interface StreamItem {
  readonly kind: 'reasoning' | 'message' | 'call';
  readonly outputIndex: number;
  readonly id: string;
  /** The reasoning, the text, or the call's arguments so far. */
  text: string;
  done: boolean;
  /** Calls only. */
  readonly callId?: string;
  readonly tool?: ClientTool;
}

/** A chat tool call whose name has not come yet (its arguments wait for it). */
interface PendingCall {
  id: string | undefined;
  name: string | undefined;
  argumentsText: string;
}

const sse = (type: string, data: JsonObject): string => `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;

class ResponsesEventStream implements StreamTranslator {
  readonly #memo: ResponsesMemo;
  readonly #context: TranslationContext;
  #sequence = 0;
  #started = false;
  #ended = false;
  readonly #items: StreamItem[] = [];
  #reasoning: StreamItem | undefined;
  #message: StreamItem | undefined;
  /** By the node's tool call `index`. */
  readonly #calls = new Map<number, StreamItem>();
  readonly #pending = new Map<number, PendingCall>();
  #finishReason: unknown;
  #usage: unknown;

  constructor(memo: ResponsesMemo, context: TranslationContext) {
    this.#memo = memo;
    this.#context = context;
  }

  event(data: string): string {
    if (this.#ended) return '';
    let out = this.#start();
    if (data.trim() === '[DONE]') return out + this.#close(true);
    let chunk: unknown;
    try {
      chunk = JSON.parse(data);
    } catch {
      return out;
    }
    if (!isRecord(chunk)) return out;
    if (chunk['error'] !== undefined && chunk['choices'] === undefined)
      return out + this.#failed(nodeErrorMessage(chunk['error']));
    if (isRecord(chunk['usage'])) this.#usage = chunk['usage'];
    const choices = chunk['choices'];
    const choice = Array.isArray(choices) && isRecord(choices[0]) ? choices[0] : undefined;
    if (choice === undefined) return out;
    const delta = isRecord(choice['delta']) ? choice['delta'] : {};
    const reasoning = reasoningOf(delta);
    if (reasoning !== undefined) out += this.#reasoningDelta(reasoning);
    if (typeof delta['content'] === 'string' && delta['content'] !== '') out += this.#textDelta(delta['content']);
    if (Array.isArray(delta['tool_calls'])) for (const call of delta['tool_calls'].filter(isRecord)) out += this.#callDelta(call);
    if (choice['finish_reason'] !== null && choice['finish_reason'] !== undefined) this.#finishReason = choice['finish_reason'];
    return out;
  }

  end(): string {
    if (this.#ended) return '';
    return this.#start() + this.#close(false);
  }

  fail(message: string): string {
    if (this.#ended) return '';
    return this.#start() + this.#failed(message);
  }

  // ── events ───────────────────────────────────────────────────────────────────────────────

  #emit(type: string, fields: JsonObject): string {
    return sse(type, { type, sequence_number: this.#sequence++, ...fields });
  }

  #response(state: ResponseState): JsonObject {
    return responseObject(this.#memo, this.#context, state);
  }

  #start(): string {
    if (this.#started) return '';
    this.#started = true;
    const response = this.#response({ status: 'in_progress', output: [], usage: null });
    return this.#emit('response.created', { response }) + this.#emit('response.in_progress', { response });
  }

  #open(kind: StreamItem['kind'], id: string, call?: { callId: string; tool: ClientTool }): StreamItem {
    const item: StreamItem = { kind, outputIndex: this.#items.length, id, text: '', done: false, ...call };
    this.#items.push(item);
    return item;
  }

  /** The item as the client sees it now (`in_progress`) or at its end. */
  #itemBody(item: StreamItem, status: 'in_progress' | 'completed' | 'incomplete'): JsonObject {
    if (item.kind === 'reasoning') return reasoningItem(item.id, item.text);
    if (item.kind === 'message') return messageItem(item.id, status, status === 'in_progress' ? [] : [outputText(item.text)]);
    const tool = item.tool ?? { kind: 'function', name: '' };
    return toolCallItem(this.#context, {
      tool,
      callId: item.callId ?? '',
      outputIndex: item.outputIndex,
      argumentsText: item.text,
      status,
    });
  }

  #reasoningDelta(text: string): string {
    let out = '';
    if (this.#reasoning === undefined) {
      out += this.#closeOpen();
      const item = this.#open('reasoning', itemId('rs', this.#context, this.#items.length));
      this.#reasoning = item;
      const at = { item_id: item.id, output_index: item.outputIndex, content_index: 0 };
      out += this.#emit('response.output_item.added', {
        output_index: item.outputIndex,
        item: { ...reasoningItem(item.id, ''), content: [] },
      });
      out += this.#emit('response.content_part.added', { ...at, part: { type: 'reasoning_text', text: '' } });
    }
    const item = this.#reasoning;
    item.text += text;
    return (
      out +
      this.#emit('response.reasoning_text.delta', {
        item_id: item.id,
        output_index: item.outputIndex,
        content_index: 0,
        delta: text,
      })
    );
  }

  #textDelta(text: string): string {
    let out = '';
    if (this.#message === undefined) {
      out += this.#closeOpen();
      const item = this.#open('message', itemId('msg', this.#context, this.#items.length));
      this.#message = item;
      out += this.#emit('response.output_item.added', {
        output_index: item.outputIndex,
        item: this.#itemBody(item, 'in_progress'),
      });
      out += this.#emit('response.content_part.added', {
        item_id: item.id,
        output_index: item.outputIndex,
        content_index: 0,
        part: outputText(''),
      });
    }
    const item = this.#message;
    item.text += text;
    return (
      out +
      this.#emit('response.output_text.delta', {
        item_id: item.id,
        output_index: item.outputIndex,
        content_index: 0,
        delta: text,
        logprobs: [],
      })
    );
  }

  #callDelta(call: Readonly<Record<string, unknown>>): string {
    const index = typeof call['index'] === 'number' ? call['index'] : 0;
    const fn = isRecord(call['function']) ? call['function'] : {};
    const piece = typeof fn['arguments'] === 'string' ? fn['arguments'] : '';
    const open = this.#calls.get(index);
    if (open !== undefined) return this.#argumentsDelta(open, piece);
    const pending = this.#pending.get(index) ?? { id: undefined, name: undefined, argumentsText: '' };
    this.#pending.set(index, pending);
    if (typeof call['id'] === 'string' && call['id'] !== '') pending.id ??= call['id'];
    if (typeof fn['name'] === 'string' && fn['name'] !== '') pending.name ??= fn['name'];
    pending.argumentsText += piece;
    if (pending.name === undefined) return '';
    this.#pending.delete(index);
    let out = this.#closeOpen();
    const tool = clientToolOf(this.#memo, pending.name);
    const outputIndex = this.#items.length;
    const callId = pending.id ?? fallbackCallId(this.#context, outputIndex);
    const item = this.#open('call', itemId(tool.kind === 'custom' ? 'ctc' : 'fc', this.#context, outputIndex), { callId, tool });
    this.#calls.set(index, item);
    out += this.#emit('response.output_item.added', { output_index: outputIndex, item: this.#itemBody(item, 'in_progress') });
    return out + this.#argumentsDelta(item, pending.argumentsText);
  }

  #argumentsDelta(item: StreamItem, piece: string): string {
    if (piece === '') return '';
    item.text += piece;
    if (item.tool?.kind === 'custom') return '';
    return this.#emit('response.function_call_arguments.delta', {
      item_id: item.id,
      output_index: item.outputIndex,
      delta: piece,
    });
  }

  /** Ends the open reasoning and message items (a new item starts: they are over). */
  #closeOpen(): string {
    let out = '';
    for (const item of [this.#reasoning, this.#message]) if (item !== undefined) out += this.#finish(item, 'completed');
    this.#reasoning = undefined;
    this.#message = undefined;
    return out;
  }

  /** An item's closing events. */
  #finish(item: StreamItem, status: 'completed' | 'incomplete'): string {
    if (item.done) return '';
    item.done = true;
    const where = { item_id: item.id, output_index: item.outputIndex };
    let out = '';
    if (item.kind === 'reasoning') {
      out += this.#emit('response.reasoning_text.done', { ...where, content_index: 0, text: item.text });
      out += this.#emit('response.content_part.done', {
        ...where,
        content_index: 0,
        part: { type: 'reasoning_text', text: item.text },
      });
    } else if (item.kind === 'message') {
      out += this.#emit('response.output_text.done', { ...where, content_index: 0, text: item.text, logprobs: [] });
      out += this.#emit('response.content_part.done', { ...where, content_index: 0, part: outputText(item.text) });
    } else if (item.tool?.kind === 'custom') {
      const input = customInput(item.text);
      out += this.#emit('response.custom_tool_call_input.delta', { ...where, delta: input });
      out += this.#emit('response.custom_tool_call_input.done', { ...where, input });
    } else {
      out += this.#emit('response.function_call_arguments.done', { ...where, arguments: item.text });
    }
    return out + this.#emit('response.output_item.done', { output_index: item.outputIndex, item: this.#itemBody(item, status) });
  }

  /** The node finished (`[DONE]`, or its stream ended after a finish reason): close every item, then the response. */
  #close(sawDone: boolean): string {
    if (!sawDone && this.#finishReason === undefined)
      return this.#failed("the node's stream ended before its answer was finished");
    this.#ended = true;
    const { status, reason } = finishStatus(this.#finishReason);
    let out = '';
    for (const item of this.#items) out += this.#finish(item, status);
    const response = this.#response({
      status,
      output: this.#items.map((item) => this.#itemBody(item, status)),
      usage: responseUsage(this.#usage),
      incompleteReason: reason,
    });
    return out + this.#emit(status === 'completed' ? 'response.completed' : 'response.incomplete', { response });
  }

  #failed(message: string): string {
    this.#ended = true;
    const error = { code: 'server_error', message };
    const response = this.#response({
      status: 'failed',
      output: this.#items.map((item) => this.#itemBody(item, 'incomplete')),
      usage: responseUsage(this.#usage),
      error,
    });
    return this.#emit('response.failed', { response }) + this.#emit('error', { code: 'server_error', message, param: null });
  }
}

/** The words of a node's in-stream error (`{"error": {"message": …}}` or `{"error": "…"}`). */
function nodeErrorMessage(error: unknown): string {
  if (typeof error === 'string' && error !== '') return error;
  if (isRecord(error) && typeof error['message'] === 'string') return error['message'];
  return 'the node reported an error in its stream';
}

export function responsesEventStream(memo: ResponsesMemo, context: TranslationContext): StreamTranslator {
  return new ResponsesEventStream(memo, context);
}
