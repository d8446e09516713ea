// The reader of a stream whose usage the gateway asked for (request/usage-ask.ts): each event is
// framed, the usage chunk (`"choices":[]` and a `usage` object) is read and taken out with its
// empty line, and where the node's kind adds `"usage":null` to the other chunks once asked, that
// member is taken out of them. Every other byte passes as the node sent it, so the client gets the
// stream it would have got without the option. Only events naming `"usage"` or `"timings"` are
// parsed. An event longer than the bound is not waited for: the rest of the stream passes as is.

import { Buffer } from 'node:buffer';
import { isRecord } from '#src/core/is-record.ts';
import type { AnswerReader } from './answer-reader.ts';
import type { AnswerEnd, AnswerUsage } from './answer-usage.ts';
import { SeenTokens, TokenMarkers } from './seen-tokens.ts';
import { dataSpan, EventFramer, type EventRun } from './sse-events.ts';
import { nullCuts, USAGE_STATED, withoutCuts } from './run-nulls.ts';
import { UsageTally } from './usage-reader.ts';

/** Bytes one event may take before the reader stops framing (an event is a few hundred bytes). */
export const MAX_FRAMED_EVENT_BYTES = 256 * 1024;

const EMPTY = Buffer.alloc(0);

/** What asking for the usage added besides the usage chunk (request/usage-ask.ts builds it). */
export interface UsageAsked {
  /**
   * The chunk's JSON without the `"usage":null` the node's kind adds to every chunk once asked
   * (kinds/stream-usage.ts); undefined = the kind adds none, or sends them anyway: they stay.
   * A `,"usage":null` ending a chunk that names usage nowhere else it must take off as it is (13
   * bytes): run-nulls.ts cuts those itself, a run of events at once, without calling it.
   */
  readonly withoutAddedNulls: ((data: Buffer) => Buffer) | undefined;
}

export class UsageStrip implements AnswerReader {
  readonly #framer = new EventFramer();
  readonly #tally = new UsageTally();
  readonly #asked: UsageAsked;
  readonly #markers = new TokenMarkers();
  #seen = 0;
  /** Past the bound: framing stopped, the rest passes unread but for the token count. */
  #unframed: SeenTokens | undefined;

  constructor(asked: UsageAsked) {
    this.#asked = asked;
  }

  pass(chunk: Buffer): Buffer {
    if (this.#unframed !== undefined) {
      this.#unframed.push(chunk);
      return chunk;
    }
    const passed = this.#run(this.#framer.push(chunk));
    if (this.#framer.pendingBytes <= MAX_FRAMED_EVENT_BYTES) return passed;
    this.#unframed = new SeenTokens();
    const rest = this.#framer.rest();
    this.#seen += this.#markers.count(rest.toString('latin1'));
    return passed.length === 0 ? rest : Buffer.concat([passed, rest]);
  }

  flush(): Buffer {
    if (this.#unframed !== undefined) return EMPTY;
    const rest = this.#framer.rest();
    return rest.length === 0 ? rest : this.#event(rest, rest.toString('latin1'));
  }

  seenTokens(): number {
    return this.#seen + (this.#unframed?.count ?? 0);
  }

  usage(end: AnswerEnd): AnswerUsage | undefined {
    return this.#tally.usage(this.#seen + (this.#unframed?.count ?? 0), end);
  }

  /**
   * The whole events of one chunk: a run naming neither `"usage"` nor `"timings"` (every event but
   * the last few) passes as it is, read once for its tokens; its first events whose only usage is a
   * vLLM chunk's `"usage":null` are cut at once (run-nulls.ts); the others each on its own.
   */
  #run(run: EventRun): Buffer {
    if (run.ends.length === 0) return EMPTY;
    // One byte per character: the ASCII searches see every byte, whatever the UTF-8 in between.
    const { text } = run;
    if (!text.includes('"usage"') && !text.includes('"timings"')) {
      this.#seen += this.#markers.count(text);
      return run.bytes;
    }
    // Asked, every chunk but the last names only `"usage":null`: those events are cut in one pass.
    const read = nullCuts(run, this.#asked.withoutAddedNulls !== undefined);
    const whole = read.end === run.bytes.length;
    if (read.end > 0) this.#seen += this.#markers.count(whole ? text : text.slice(0, read.end));
    const head = read.end === 0 ? EMPTY : withoutCuts(whole ? run.bytes : run.bytes.subarray(0, read.end), read.cuts);
    if (whole) return head;
    const out: Buffer[] = head.length > 0 ? [head] : [];
    let start = read.end;
    // Indexed: no iterator and result objects per event while the code is cold.
    for (let i = 0; i < run.ends.length; i += 1) {
      const end = run.ends[i] as number;
      if (end <= start) continue;
      const passed = this.#event(run.bytes.subarray(start, end), text.slice(start, end));
      if (passed.length > 0) out.push(passed);
      start = end;
    }
    return out.length === 1 ? (out[0] as Buffer) : Buffer.concat(out);
  }

  /** One whole event (`text`: its bytes as latin1): what the client gets of it. */
  #event(event: Buffer, text: string): Buffer {
    if (!text.includes('"usage"') && !text.includes('"timings"')) {
      this.#seen += this.#markers.count(text);
      return event;
    }
    const span = dataSpan(event);
    if (span === undefined) return event;
    const [start, end] = span;
    const data = event.subarray(start, end);
    // A chunk whose only usage is `"usage":null` (asked, every chunk but the last) is not parsed.
    if (!USAGE_STATED.test(text) && !text.includes('"timings"')) {
      this.#seen += this.#markers.count(text);
      return this.#withoutNulls(event, data, start, end);
    }
    let value: unknown;
    try {
      value = JSON.parse(data.toString('utf8'));
    } catch {
      return event;
    }
    this.#tally.add(value);
    if (!isRecord(value)) return event;
    if (Array.isArray(value.choices) && value.choices.length === 0 && isRecord(value.usage)) return EMPTY;
    this.#seen += this.#markers.count(text);
    return value.usage === null ? this.#withoutNulls(event, data, start, end) : event;
  }

  /** The event without the top-level `"usage":null` of its data, where the kind adds them once asked. */
  #withoutNulls(event: Buffer, data: Buffer, start: number, end: number): Buffer {
    const strip = this.#asked.withoutAddedNulls;
    if (strip === undefined) return event;
    const stripped = strip(data);
    return stripped === data ? event : Buffer.concat([event.subarray(0, start), stripped, event.subarray(end)]);
  }
}
