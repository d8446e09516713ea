// Server-sent events as bytes (the WHATWG event-stream format): where each event ends (an empty
// line; lines end in LF, CRLF or CR), and the `data:` of one event. Only the streams whose events
// the gateway must see are framed (usage-strip.ts); the others pass as the node's chunks came.

import { Buffer } from 'node:buffer';

const LF = 0x0a;
const CR = 0x0d;

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

  /** The events `chunk` finishes, in order (subarrays of it where possible). */
  push(chunk: Buffer): Buffer[] {
    // Servers end lines with LF: such a chunk is cut with string searches, any other byte by byte.
    const text = chunk.toString('latin1');
    return this.#afterCr || text.includes('\r') ? this.#pushBytes(chunk) : this.#pushLf(chunk, text);
  }

  #pushLf(chunk: Buffer, text: string): Buffer[] {
    const events: Buffer[] = [];
    let start = 0;
    for (;;) {
      // An LF first on a line (or first after the last line's LF) is the empty line that ends the event.
      const end = this.#atLineStart && text.charCodeAt(start) === LF ? start + 1 : endOfBlankLine(text, start);
      if (end < 0) break;
      events.push(this.#take(chunk, start, end));
      start = end;
      this.#atLineStart = true;
    }
    if (start < chunk.length) {
      this.#pending.push(chunk.subarray(start));
      this.#pendingBytes += chunk.length - start;
      this.#atLineStart = text.charCodeAt(chunk.length - 1) === LF;
    }
    return events;
  }

  #pushBytes(chunk: Buffer): Buffer[] {
    const events: Buffer[] = [];
    let start = 0;
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i];
      if (this.#afterCr) {
        this.#afterCr = false;
        const ended = this.#endsAfterCr;
        this.#endsAfterCr = false;
        if (byte === LF) {
          if (ended) {
            events.push(this.#take(chunk, start, i + 1));
            start = i + 1;
          }
          continue;
        }
        if (ended) {
          events.push(this.#take(chunk, start, i));
          start = i;
        }
      }
      if (byte === LF || byte === CR) {
        const emptyLine = this.#atLineStart;
        this.#atLineStart = true;
        if (byte === CR) {
          this.#afterCr = true;
          this.#endsAfterCr = emptyLine;
        } else if (emptyLine) {
          events.push(this.#take(chunk, start, i + 1));
          start = i + 1;
        }
      } else {
        this.#atLineStart = false;
      }
    }
    if (start < chunk.length) {
      this.#pending.push(chunk.subarray(start));
      this.#pendingBytes += chunk.length - start;
    }
    return events;
  }

  /** At the stream's end: what is left (an event its last empty line never ended, or a CR-ended one). */
  rest(): Buffer {
    const rest = this.#joinPending(Buffer.alloc(0));
    this.#afterCr = false;
    this.#endsAfterCr = false;
    return rest;
  }

  #take(chunk: Buffer, start: number, end: number): Buffer {
    return this.#joinPending(chunk.subarray(start, end));
  }

  #joinPending(last: Buffer): Buffer {
    if (this.#pending.length === 0) return last;
    const joined = Buffer.concat([...this.#pending, last]);
    this.#pending = [];
    this.#pendingBytes = 0;
    return joined;
  }
}

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

/** The `data:` values of the whole events in `text` (an answer's end, its first event possibly cut), joined per event. */
export function eventData(text: string): string[] {
  const out: string[] = [];
  for (const block of text.split(/\r\n\r\n|\n\n|\r\r/)) {
    const lines = block.split(/\r\n|\n|\r/).filter((line) => line.startsWith('data:'));
    if (lines.length > 0) out.push(lines.map((line) => line.slice(line.startsWith('data: ') ? 6 : 5)).join('\n'));
  }
  return out;
}
