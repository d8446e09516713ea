// The reader of a node's event stream that the client gets translated (answer-rewrite.ts): the
// node's chunks are cut into whole events, each event's data goes through the translation's
// StreamTranslator, and what it gives is what the client gets. The node's own bytes also go to
// `inner` (the gateway's usual reader), which counts the tokens and reads the usage as for any stream.

import { Buffer } from 'node:buffer';
import type { StreamTranslator } from '#src/translate/translation.ts';
import type { AnswerReader } from '../attempt/answer-reader.ts';
import type { AnswerEnd, AnswerUsage } from '../attempt/answer-usage.ts';
import { EventFramer, eventData } from '../attempt/sse-events.ts';

export class TranslatedStream implements AnswerReader {
  readonly #translator: StreamTranslator;
  readonly #inner: AnswerReader;
  readonly #framer = new EventFramer();

  constructor(translator: StreamTranslator, inner: AnswerReader) {
    this.#translator = translator;
    this.#inner = inner;
  }

  pass(chunk: Buffer): Buffer {
    this.#inner.pass(chunk);
    return this.#translated(this.#framer.push(chunk).bytes);
  }

  /** The node's stream ended: its last unfinished event (if any), then the closing events the client is owed. */
  flush(): Buffer {
    this.#inner.flush();
    const rest = this.#translated(this.#framer.rest());
    return Buffer.concat([rest, Buffer.from(this.#translator.end(), 'utf8')]);
  }

  broke(error: string): Buffer {
    this.#inner.flush();
    return Buffer.from(this.#translator.fail(`the node's stream broke off: ${error}`), 'utf8');
  }

  usage(end: AnswerEnd): AnswerUsage | undefined {
    return this.#inner.usage(end);
  }

  seenTokens(): number {
    return this.#inner.seenTokens();
  }

  #translated(events: Buffer): Buffer {
    if (events.length === 0) return events;
    let out = '';
    for (const data of eventData(events.toString('utf8'))) out += this.#translator.event(data);
    return Buffer.from(out, 'utf8');
  }
}
