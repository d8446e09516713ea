// The id of a streamed answer, read from its first event as it passes — before the answer ends,
// which is when an in-flight control (`/v1/chat/completions/control {id}`) or a `GET
// /v1/responses/{id}` of an answer still generating needs to know its node. A chat completion's
// chunks each carry the completion's `id` (`chatcmpl-…`); a Responses stream opens with
// `response.created`, whose `response.id` is the answer's. Bounded: at most the first 4 KiB are
// kept, copied; past them, or once the first event is whole, nothing more is looked at.

import { Buffer } from 'node:buffer';
import { isRecord } from '#src/core/is-record.ts';
import type { AnswerReader } from './answer-reader.ts';
import type { AnswerEnd, AnswerUsage } from './answer-usage.ts';
import { eventData } from './sse-events.ts';

/** The most of a stream's start kept while its first event is incomplete. */
export const FIRST_EVENT_MAX_BYTES = 4096;
/** An empty line: the end of an event (built once: a regular expression literal is a new object each time it is evaluated). */
const EVENT_END = /\r\n\r\n|\n\n|\r\r/;
/** The longest id learned (a longer one is no server's). */
const MAX_ID_LENGTH = 512;

/** Pure: the answer id one event's `data` names (a chat chunk's `id`, `response.created`'s `response.id`), if any. */
export function answerIdOfEvent(data: string): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    return undefined;
  }
  if (!isRecord(value)) return undefined;
  const id =
    value.object === 'chat.completion.chunk'
      ? value.id
      : isRecord(value.response) && value.response.object === 'response'
        ? value.response.id
        : undefined;
  return typeof id === 'string' && id !== '' && id.length <= MAX_ID_LENGTH ? id : undefined;
}

/** `inner`, with the stream's first event read for its answer id, told once to `learn`. */
export class FirstIdWatch implements AnswerReader {
  readonly #inner: AnswerReader;
  readonly #learn: (id: string) => void;
  #head: Buffer[] = [];
  #bytes = 0;
  #done = false;
  /** The inner reader's own ending of a broken stream, where it has one (absent: the client API's terminal event, stream-break.ts). */
  readonly broke?: (error: string) => Buffer;

  constructor(inner: AnswerReader, learn: (id: string) => void) {
    this.#inner = inner;
    this.#learn = learn;
    const broke = inner.broke;
    if (broke !== undefined) this.broke = (error) => broke.call(inner, error);
  }

  pass(chunk: Buffer): Buffer {
    if (!this.#done) this.#look(chunk);
    return this.#inner.pass(chunk);
  }

  flush(): Buffer {
    return this.#inner.flush();
  }

  usage(end: AnswerEnd): AnswerUsage | undefined {
    return this.#inner.usage(end);
  }

  seenTokens(): number {
    return this.#inner.seenTokens();
  }

  #look(chunk: Buffer): void {
    const part = Buffer.from(chunk.subarray(0, FIRST_EVENT_MAX_BYTES - this.#bytes));
    this.#head.push(part);
    this.#bytes += part.length;
    const text = Buffer.concat(this.#head, this.#bytes).toString('utf8');
    const end = text.search(EVENT_END);
    if (end < 0 && this.#bytes < FIRST_EVENT_MAX_BYTES) return;
    this.#done = true;
    this.#head = [];
    if (end < 0) return;
    const first = eventData(text.slice(0, end))[0];
    const id = first === undefined ? undefined : answerIdOfEvent(first);
    if (id !== undefined) this.#learn(id);
  }
}
