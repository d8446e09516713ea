// Server-sent events as bytes (the WHATWG event-stream format): where each event ends (an empty
// line; lines end in LF, CRLF or CR), and the `data:` of one event. Only the streams whose events
// the gateway must see are framed (usage-strip.ts); the others pass as the node's chunks came.

import { Buffer } from 'node:buffer';
import { appended } from '#src/core/appended.ts';

const LF = 0x0a;
const CR = 0x0d;

/**
 * The whole events one chunk finished, as one run of bytes: what waited from earlier chunks, then the
 * chunk up to the end of its last whole event. `ends` are the offsets in `bytes` just past each event;
 * `text` is `bytes` read as latin1 (one character per byte, so its offsets are the bytes').
 */
export interface EventRun {
  readonly bytes: Buffer;
  readonly text: string;
  readonly ends: readonly number[];
}

const EMPTY = Buffer.alloc(0);
const NO_EVENTS: EventRun = Object.freeze({ bytes: EMPTY, text: '', ends: Object.freeze([]) });

/** The events of a run, each a subarray of it. */
export function runEvents(run: EventRun): Buffer[] {
  let start = 0;
  return run.ends.map((end) => run.bytes.subarray(start, (start = end)));
}

/** Cuts a byte stream into whole events, each with its terminating empty line; bytes of an unfinished one wait. */
export class EventFramer {
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  /** The current line has no bytes yet (the stream's start, or just after a line end). */
  #atLineStart = true;
  /** A CR ended the last chunk: an LF first in the next one belongs to it. */
  #afterCr = false;
  /** The CR just seen ended an empty line: the event ends after it (or after its LF). */
  #endsAfterCr = false;

  /** Bytes of the event not finished yet. */
  get pendingBytes(): number {
    return this.#pendingBytes;
  }

  /** The events `chunk` finishes, as one run (the chunk itself when it ends at an event's end and nothing waited). */
  push(chunk: Buffer): EventRun {
    // Servers end lines with LF: such a chunk is cut with string searches, any other byte by byte.
    const text = chunk.toString('latin1');
    const ends = this.#afterCr || text.includes('\r') ? this.#pushBytes(chunk) : this.#pushLf(text);
    const last = ends.length === 0 ? 0 : (ends[ends.length - 1] as number);
    let run = NO_EVENTS;
    if (ends.length > 0) {
      const before = this.#pendingBytes;
      const whole = last === chunk.length;
      const bytes = this.#joinPending(whole ? chunk : chunk.subarray(0, last));
      run =
        before === 0
          ? { bytes, text: whole ? text : text.slice(0, last), ends }
          : { bytes, text: bytes.toString('latin1'), ends: ends.map((end) => end + before) };
    }
    if (last < chunk.length) {
      this.#pending.push(chunk.subarray(last));
      this.#pendingBytes += chunk.length - last;
    }
    return run;
  }

  #pushLf(text: string): readonly number[] {
    let ends: number[] | undefined;
    let start = 0;
    for (;;) {
      // An LF first on a line (or first after the last line's LF) is the empty line that ends the event.
      const end = this.#atLineStart && text.charCodeAt(start) === LF ? start + 1 : endOfBlankLine(text, start);
      if (end < 0) break;
      ends = appended(ends, end);
      start = end;
      this.#atLineStart = true;
    }
    if (start < text.length) this.#atLineStart = text.charCodeAt(text.length - 1) === LF;
    return ends ?? NO_ENDS;
  }

  #pushBytes(chunk: Buffer): readonly number[] {
    let ends: number[] | undefined;
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i];
      if (this.#afterCr) {
        this.#afterCr = false;
        const ended = this.#endsAfterCr;
        this.#endsAfterCr = false;
        if (byte === LF) {
          if (ended) ends = appended(ends, i + 1);
          continue;
        }
        if (ended) ends = appended(ends, i);
      }
      if (byte === LF || byte === CR) {
        const emptyLine = this.#atLineStart;
        this.#atLineStart = true;
        if (byte === CR) {
          this.#afterCr = true;
          this.#endsAfterCr = emptyLine;
        } else if (emptyLine) {
          ends = appended(ends, i + 1);
        }
      } else {
        this.#atLineStart = false;
      }
    }
    return ends ?? NO_ENDS;
  }

  /** At the stream's end: what is left (an event its last empty line never ended, or a CR-ended one). */
  rest(): Buffer {
    const rest = this.#joinPending(EMPTY);
    this.#afterCr = false;
    this.#endsAfterCr = false;
    return rest;
  }

  /** What waited, then `last`, in one buffer; nothing waits after. */
  #joinPending(last: Buffer): Buffer {
    if (this.#pending.length === 0) return last;
    const joined = Buffer.concat([...this.#pending, last]);
    this.#pending = [];
    this.#pendingBytes = 0;
    return joined;
  }
}

/** A chunk that ends no event (its list of ends is grown only when one does: core/appended.ts). */
const NO_ENDS: readonly number[] = Object.freeze([]);

/** Just past the next `\n\n` at or after `from` in text (LF line ends only), or -1. */
function endOfBlankLine(text: string, from: number): number {
  const at = text.indexOf('\n\n', from);
  return at < 0 ? -1 : at + 2;
}

/** Where the one `data:` line's value lies in an event (after `data:` and one space), if it has exactly one. */
export function dataSpan(event: Buffer): readonly [number, number] | undefined {
  let found: readonly [number, number] | undefined;
  let lineStart = 0;
  while (lineStart < event.length) {
    let lineEnd = lineStart;
    while (lineEnd < event.length && event[lineEnd] !== LF && event[lineEnd] !== CR) lineEnd += 1;
    if (lineEnd > lineStart && startsWithData(event, lineStart)) {
      if (found !== undefined) return undefined;
      const valueStart = lineStart + 5 + (event[lineStart + 5] === 0x20 ? 1 : 0);
      found = [Math.min(valueStart, lineEnd), lineEnd];
    }
    lineStart = lineEnd + (event[lineEnd] === CR && event[lineEnd + 1] === LF ? 2 : 1);
  }
  return found;
}

const DATA = Buffer.from('data:');

function startsWithData(event: Buffer, at: number): boolean {
  return event.compare(DATA, 0, DATA.length, at, at + DATA.length) === 0;
}

// Built once: a regular expression literal is a new object each time it is evaluated.
const BLANK_LINE = /\r\n\r\n|\n\n|\r\r/;
const LINE_END = /\r\n|\n|\r/;

/** The `data:` values of the whole events in `text` (an answer's end, its first event possibly cut), joined per event. */
export function eventData(text: string): string[] {
  const out: string[] = [];
  for (const block of text.split(BLANK_LINE)) {
    const lines = block.split(LINE_END).filter((line) => line.startsWith('data:'));
    if (lines.length > 0) out.push(lines.map((line) => line.slice(line.startsWith('data: ') ? 6 : 5)).join('\n'));
  }
  return out;
}
