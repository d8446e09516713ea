// The reader of an answer that passes untouched (the gateway asked for nothing): it keeps the
// answer's first event and its last few KiB, where the servers state usage (a JSON answer's
// `usage`, a stream's last chunks or NDJSON line; Anthropic's `message_start` comes first), and for
// a stream — SSE or NDJSON (Ollama's native API) — counts the generated-text events as they pass
// (seen-tokens.ts), for a stream cut short. Nothing is parsed until the end, and then only the
// kept bytes; bounded, and copied (kept-tail.ts): a chunk kept as it came would keep the whole
// socket read it is a view of.

import { Buffer } from 'node:buffer';
import type { AnswerReader } from './answer-reader.ts';
import type { AnswerEnd, AnswerUsage } from './answer-usage.ts';
import { KeptTail } from './kept-tail.ts';
import { SeenTokens } from './seen-tokens.ts';
import { eventData } from './sse-events.ts';
import { UsageTally } from './usage-reader.ts';

/** Bytes of an answer's end that are kept, and of its start (for its first event). */
export const USAGE_TAIL_BYTES = 4096;

const EMPTY = Buffer.alloc(0);

/** How the answer is framed: an SSE stream, an NDJSON stream (one object a line), or one JSON body (or other media). */
export type WatchedFraming = 'sse' | 'ndjson' | 'body';

export class UsageWatch implements AnswerReader {
  readonly #eventStream: boolean;
  readonly #seen: SeenTokens | undefined;
  /** A stream's first bytes (its first event), each chunk's part copied once, joined when read. */
  readonly #head: Buffer[] = [];
  #headBytes = 0;
  readonly #tail = new KeptTail(USAGE_TAIL_BYTES);
  #total = 0;

  /** A stream (`sse`, `ndjson`) has its generated-text events counted as they pass; a body has not. */
  constructor(framing: WatchedFraming) {
    this.#eventStream = framing === 'sse';
    this.#seen = framing === 'body' ? undefined : new SeenTokens();
  }

  pass(chunk: Buffer): Buffer {
    this.#seen?.push(chunk);
    if (this.#eventStream && this.#headBytes < USAGE_TAIL_BYTES) {
      const part = ownCopy(chunk.subarray(0, USAGE_TAIL_BYTES - this.#headBytes));
      this.#head.push(part);
      this.#headBytes += part.length;
    }
    this.#total += chunk.length;
    this.#tail.push(chunk);
    return chunk;
  }

  flush(): Buffer {
    return EMPTY;
  }

  seenTokens(): number {
    return this.#seen?.count ?? 0;
  }

  usage(end: AnswerEnd): AnswerUsage | undefined {
    const tally = new UsageTally();
    const tailText = this.#tail.bytes().toString('utf8');
    if (this.#eventStream) {
      const first = eventData(Buffer.concat(this.#head, this.#headBytes).toString('utf8'))[0];
      if (first !== undefined && this.#total > USAGE_TAIL_BYTES) addParsed(tally, first);
      for (const data of eventData(tailText)) addParsed(tally, data);
    } else {
      tally.add(jsonTailUsage(tailText));
      // An NDJSON stream (Ollama's native API): its last line is the final object, with the counts.
      tally.add(lastLine(tailText));
    }
    return tally.usage(this.#seen?.count, end);
  }
}

/** `bytes` in a buffer of their own (not a view of the socket read, nor a slice of the shared pool: either would be kept). */
function ownCopy(bytes: Buffer): Buffer {
  const out = Buffer.allocUnsafeSlow(bytes.length);
  bytes.copy(out, 0);
  return out;
}

/** Only what names usage (or llama-server's timings) is parsed; a piece cut by the tail's start does not parse, and is skipped. */
function addParsed(tally: UsageTally, data: string): void {
  if (!data.includes('"usage"') && !data.includes('"timings"')) return;
  try {
    tally.add(JSON.parse(data));
  } catch {
    // Not JSON (`[DONE]`), or cut: it states nothing.
  }
}

/** The last non-empty line of `text` parsed as JSON; undefined when it does not parse (a JSON answer's tail, a cut line). */
function lastLine(text: string): unknown {
  const trimmed = text.trimEnd();
  const line = trimmed.slice(trimmed.lastIndexOf('\n') + 1);
  if (!line.startsWith('{') || !line.includes('_count"')) return undefined;
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

/** The last `usage` and `timings` objects in the end of a JSON answer too big to hold (their text parsed alone). */
export function jsonTailUsage(text: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of ['usage', 'timings']) {
    const value = lastObjectAfter(text, key);
    if (value !== undefined) out[key] = value;
  }
  return out;
}

function lastObjectAfter(text: string, key: string): unknown {
  const pattern = new RegExp(`"${key}"\\s*:\\s*\\{`, 'g');
  let start = -1;
  for (const match of text.matchAll(pattern)) start = match.index + match[0].length - 1;
  if (start < 0) return undefined;
  const end = objectEnd(text, start);
  if (end === undefined) return undefined;
  try {
    return JSON.parse(text.slice(start, end));
  } catch {
    return undefined;
  }
}

/** Index just past the object opening at `start` (strings skipped), or undefined when the text ends first. */
function objectEnd(text: string, start: number): number | undefined {
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      i += 1;
      while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    } else if (c === '{') depth += 1;
    else if (c === '}') {
      depth -= 1;
      if (depth === 0) return i + 1;
    }
  }
  return undefined;
}
