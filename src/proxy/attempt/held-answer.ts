// Holding a node's answer in memory before anything of it reaches the client, always bounded: the
// one budget on the bytes held across all requests, the bounded read of a body into memory (a whole
// JSON answer held until it parses, or an error body read to recognise it), checking that a held
// JSON answer parses without building it, what a held JSON answer means (the hold_json strategy),
// and the two ends of holding — sending the answer whole with its exact length, and what a body
// that broke off while held means for the attempt.
//
// The held-bytes budget: holding a whole JSON answer until it parses costs up to the per-answer
// bound per request, for as long as the client takes to read it; without a shared bound, many slow
// readers add up to any amount.
//
// The hold_json strategy, for a whole (non-SSE) 2xx JSON answer: hold it until it is complete and
// parses, so a node that answers garbage or breaks off mid-body can still be failed over. Such
// answers arrive all at once after generation, so holding them costs no latency. One bigger than
// the per-answer bound, or than what the shared budget has left, streams through unchecked. The
// attempt (forward.ts) reads the body (readHeld) and asks here what the held body means
// (heldJsonOutcome).

import { Buffer } from 'node:buffer';
import { appended } from '#src/core/appended.ts';
import type { AnswerRewrite } from './answer-rewrite.ts';
import type { AnswerUsage } from './answer-usage.ts';
import { classify } from './attempt-result.ts';
import type { AttemptOutcome } from './attempt-outcome.ts';
import { streamThrough } from './stream-through.ts';
import { STATED_USAGE_MEMBERS, wholeAnswerUsage } from './usage-reader.ts';
import {
  clientHead,
  type AttemptExchange,
  type BodyFeed,
  type BodySink,
  type ClientSide,
  type HeldReservation,
  type UpstreamAnswer,
} from './attempt-exchange.ts';

// ---- the held-bytes budget ---------------------------------------------------------------------

export class HeldBytesBudget {
  #limit: number;
  #held = 0;

  constructor(limit: number) {
    this.#limit = limit;
  }

  /** A reload's new limit: it applies to the next bytes held (bytes already held stay held). */
  setLimit(limit: number): void {
    this.#limit = limit;
  }

  /** Bytes currently reserved by all answers. */
  held(): number {
    return this.#held;
  }

  open(): HeldReservation {
    return new Reservation(this);
  }

  /** For a reservation: `bytes` more held, if the limit allows. */
  reserve(bytes: number): boolean {
    if (this.#held + bytes > this.#limit) return false;
    this.#held += bytes;
    return true;
  }

  /** For a reservation: `bytes` it held are free again. */
  unreserve(bytes: number): void {
    this.#held -= bytes;
  }
}

/** One answer's reservation: one object, its methods shared (no closures per answer). */
class Reservation implements HeldReservation {
  readonly #budget: HeldBytesBudget;
  #mine = 0;
  #released = false;

  constructor(budget: HeldBytesBudget) {
    this.#budget = budget;
  }

  take(bytes: number): boolean {
    if (this.#released || !this.#budget.reserve(bytes)) return false;
    this.#mine += bytes;
    return true;
  }

  release(): void {
    if (this.#released) return;
    this.#released = true;
    this.#budget.unreserve(this.#mine);
    this.#mine = 0;
  }
}

// ---- reading a body into memory ---------------------------------------------------------------

export type HeldBody =
  | { readonly kind: 'complete'; readonly bytes: Buffer }
  /** Past a bound: `head` was read, the rest is still in `body` (paused, no reader attached). */
  | { readonly kind: 'too_big'; readonly head: Buffer }
  | { readonly kind: 'failed'; readonly error: unknown };

/**
 * Reads a body up to `maxBytes`, each chunk reserved from the shared budget, without consuming
 * more; past either bound the body stays usable (paused) for the caller to stream on.
 */
export function holdBody(body: BodyFeed, maxBytes: number, reservation: HeldReservation): Promise<HeldBody> {
  return new Promise((onHeld) => readHeld(body, maxBytes, reservation, { onHeld }));
}

/** What is told the end of a held read, once. */
export interface HeldListener {
  onHeld(held: HeldBody): void;
}

/**
 * The same read, its end told to `listener` (once) straight from the body's producer: for a caller
 * driven by the producer's callbacks (forward.ts), with no promise between.
 */
export function readHeld(body: BodyFeed, maxBytes: number, reservation: HeldReservation, listener: HeldListener): void {
  body.attach(new HeldRead(body, maxBytes, reservation, listener));
}

class HeldRead implements BodySink {
  readonly #body: BodyFeed;
  readonly #maxBytes: number;
  readonly #reservation: HeldReservation;
  /** Most answers are one chunk: the list is made with it (core/appended.ts). */
  #chunks: Buffer[] | undefined;
  #total = 0;
  #settled = false;
  readonly #listener: HeldListener;

  constructor(body: BodyFeed, maxBytes: number, reservation: HeldReservation, listener: HeldListener) {
    this.#listener = listener;
    this.#body = body;
    this.#maxBytes = maxBytes;
    this.#reservation = reservation;
  }

  onData(chunk: Buffer): void {
    if (this.#settled) return;
    const chunks = appended(this.#chunks, chunk);
    this.#chunks = chunks;
    this.#total += chunk.length;
    if (this.#total > this.#maxBytes || !this.#reservation.take(chunk.length)) {
      this.#body.detach();
      this.#body.pause();
      this.#settle({ kind: 'too_big', head: Buffer.concat(chunks, this.#total) });
    }
  }

  onEnd(): void {
    const chunks = this.#chunks ?? [];
    this.#settle({ kind: 'complete', bytes: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, this.#total) });
  }

  onError(error: Error): void {
    this.#settle({ kind: 'failed', error });
  }

  #settle(held: HeldBody): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#listener.onHeld(held);
  }
}

/** The body parsed, or NOT_JSON: parsed once, and what the answer states is read from the result. */
export function parsedJson(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    return NOT_JSON;
  }
}

export const NOT_JSON: unique symbol = Symbol('not JSON');

// ---- reading a held JSON body without building it ----------------------------------------------
// A whole answer passed on as it came is only read for what it states it used (a few top-level
// members), yet it must parse, or it is failed over. Building it (a string of the whole body, then
// every object, array and string in it) allocates more than the answer itself; checking it byte by
// byte against JSON's grammar allocates only the members read. The check accepts exactly what
// `JSON.parse(bytes.toString('utf8'))` accepts: outside strings only JSON's own ASCII is allowed (a
// byte beyond ASCII there, or a byte-order mark, is an error either way); inside strings any byte
// beyond ASCII is text (UTF-8 decoding turns a malformed sequence into U+FFFD, never into a quote,
// a backslash or a control character, and never swallows the ASCII byte after it).

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;
const TRUE: readonly number[] = Object.freeze([0x74, 0x72, 0x75, 0x65]);
const FALSE: readonly number[] = Object.freeze([0x66, 0x61, 0x6c, 0x73, 0x65]);
const NULL: readonly number[] = Object.freeze([0x6e, 0x75, 0x6c, 0x6c]);
/** Nesting tracked in one number's bits (an answer's usual depth); deeper levels in a list. */
const BIT_LEVELS = 31;

// What the scan expects next (whitespace aside).
const VALUE = 0;
/** Right after `[`: a value, or `]`. */
const VALUE_OR_CLOSE = 1;
const KEY = 2;
/** Right after `{`: a key, or `}`. */
const KEY_OR_CLOSE = 3;
const KEY_COLON = 4;
/** After a value: a comma, the close of its container, or (at the top) the end. */
const AFTER_VALUE = 5;

/**
 * The body checked and read as `JSON.parse(bytes.toString('utf8'))` would read it, without building
 * it: NOT_JSON where that throws; undefined for JSON that is not an object; for an object, the
 * top-level members named in `wanted`, each parsed alone (of a member named twice, the last, as
 * JSON.parse keeps). One pass, byte by byte; strings, numbers and words are passed over whole.
 */
export function jsonMembers(bytes: Buffer, wanted: readonly string[]): Record<string, unknown> | undefined | typeof NOT_JSON {
  const end = bytes.length;
  let members: Record<string, unknown> | undefined;
  let state = VALUE;
  /** Containers open around `i`: bit d-1 of `objects` (or deeper[d - 32]) says whether level d is an object. */
  let depth = 0;
  let objects = 0;
  let deeper: boolean[] | undefined;
  /** The wanted top-level member whose value is being read, and where that value starts. */
  let member: string | undefined;
  let memberStart = 0;
  let i = 0;
  while (i < end) {
    const c = bytes[i] as number;
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) {
      i += 1;
      continue;
    }
    if (state === KEY_COLON) {
      if (c !== COLON) return NOT_JSON;
      i += 1;
      state = VALUE;
      continue;
    }
    if (state === KEY || state === KEY_OR_CLOSE) {
      if (c === QUOTE) {
        const keyStart = i;
        i = pastString(bytes, i);
        if (i < 0) return NOT_JSON;
        if (depth === 1 && members !== undefined) member = wantedKey(bytes, keyStart, i, wanted);
        state = KEY_COLON;
        continue;
      }
      if (state === KEY || c !== CLOSE_BRACE) return NOT_JSON;
      // `{}`: closed below, as after a value.
      state = AFTER_VALUE;
    }
    if (state === VALUE || state === VALUE_OR_CLOSE) {
      if (state === VALUE_OR_CLOSE && c === CLOSE_BRACKET) state = AFTER_VALUE;
      else {
        if (depth === 1) memberStart = i;
        if (c === OPEN_BRACE || c === OPEN_BRACKET) {
          const isObject = c === OPEN_BRACE;
          if (depth === 0 && isObject) members = {};
          depth += 1;
          if (depth <= BIT_LEVELS) objects = isObject ? objects | (1 << (depth - 1)) : objects & ~(1 << (depth - 1));
          else (deeper ??= [])[depth - BIT_LEVELS - 1] = isObject;
          i += 1;
          state = isObject ? KEY_OR_CLOSE : VALUE_OR_CLOSE;
          continue;
        }
        if (c === QUOTE) i = pastString(bytes, i);
        else if (c === MINUS || (c >= 0x30 && c <= 0x39)) i = pastNumber(bytes, i);
        else if (c === TRUE[0]) i = pastWord(bytes, i, TRUE);
        else if (c === FALSE[0]) i = pastWord(bytes, i, FALSE);
        else if (c === NULL[0]) i = pastWord(bytes, i, NULL);
        else return NOT_JSON;
        if (i < 0) return NOT_JSON;
        if (depth === 1 && member !== undefined) {
          (members as Record<string, unknown>)[member] = JSON.parse(bytes.toString('utf8', memberStart, i));
          member = undefined;
        }
        state = AFTER_VALUE;
        continue;
      }
    }
    // After a value (or at an empty container's close).
    if (depth === 0) return NOT_JSON;
    const inObject =
      depth <= BIT_LEVELS ? ((objects >>> (depth - 1)) & 1) === 1 : (deeper as boolean[])[depth - BIT_LEVELS - 1] === true;
    if (c === COMMA) {
      i += 1;
      state = inObject ? KEY : VALUE;
      continue;
    }
    if (c !== (inObject ? CLOSE_BRACE : CLOSE_BRACKET)) return NOT_JSON;
    i += 1;
    depth -= 1;
    if (depth === 1 && member !== undefined) {
      (members as Record<string, unknown>)[member] = JSON.parse(bytes.toString('utf8', memberStart, i));
      member = undefined;
    }
  }
  return state === AFTER_VALUE && depth === 0 ? members : NOT_JSON;
}

/** Past the string whose quote is at `i`, or -1: no raw control character, only JSON's escapes. */
function pastString(bytes: Buffer, i: number): number {
  const end = bytes.length;
  for (i += 1; i < end;) {
    const c = bytes[i] as number;
    // Most bytes are text: one comparison for a lower-case letter or a byte beyond ASCII.
    if (c > BACKSLASH || (c >= 0x20 && c !== QUOTE && c !== BACKSLASH)) {
      i += 1;
      continue;
    }
    if (c === QUOTE) return i + 1;
    if (c !== BACKSLASH) return -1;
    const escaped = bytes[i + 1];
    if (escaped === 0x75) {
      for (let k = i + 2; k < i + 6; k += 1) {
        const h = bytes[k] ?? -1;
        if (!((h >= 0x30 && h <= 0x39) || (h >= 0x41 && h <= 0x46) || (h >= 0x61 && h <= 0x66))) return -1;
      }
      i += 6;
    } else if (
      escaped === QUOTE ||
      escaped === BACKSLASH ||
      escaped === 0x2f ||
      escaped === 0x62 ||
      escaped === 0x66 ||
      escaped === 0x6e ||
      escaped === 0x72 ||
      escaped === 0x74
    ) {
      i += 2;
    } else return -1;
  }
  return -1;
}

/** Past the number at `i`, or -1: `-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?`. */
function pastNumber(bytes: Buffer, i: number): number {
  if (bytes[i] === MINUS) i += 1;
  if (bytes[i] === 0x30) i += 1;
  else {
    const first = i;
    i = pastDigits(bytes, i);
    if (i === first) return -1;
  }
  if (bytes[i] === 0x2e) {
    const first = i + 1;
    i = pastDigits(bytes, first);
    if (i === first) return -1;
  }
  if (bytes[i] === 0x65 || bytes[i] === 0x45) {
    i += 1;
    if (bytes[i] === 0x2b || bytes[i] === MINUS) i += 1;
    const first = i;
    i = pastDigits(bytes, i);
    if (i === first) return -1;
  }
  return i;
}

function pastDigits(bytes: Buffer, i: number): number {
  for (let c = bytes[i] ?? -1; c >= 0x30 && c <= 0x39; c = bytes[i] ?? -1) i += 1;
  return i;
}

function pastWord(bytes: Buffer, i: number, word: readonly number[]): number {
  for (let k = 0; k < word.length; k += 1) if (bytes[i + k] !== word[k]) return -1;
  return i + word.length;
}

/** Which of `wanted` the key in [start, end) (quotes included) names, as JSON.parse decodes it. */
function wantedKey(bytes: Buffer, start: number, end: number, wanted: readonly string[]): string | undefined {
  for (let k = start + 1; k < end - 1; k += 1) {
    if (bytes[k] !== BACKSLASH) continue;
    const decoded = JSON.parse(bytes.toString('utf8', start, end)) as string;
    return wanted.includes(decoded) ? decoded : undefined;
  }
  const length = end - start - 2;
  // Indexed: no iterator and result objects per key while the code is cold.
  for (let n = 0; n < wanted.length; n += 1) {
    const name = wanted[n] as string;
    if (name.length !== length) continue;
    let k = 0;
    while (k < length && bytes[start + 1 + k] === name.charCodeAt(k)) k += 1;
    if (k === length) return name;
  }
  return undefined;
}

// ---- the hold_json strategy: what a held JSON body means ----------------------------------------

/**
 * What the held body means: delivered whole, streamed on past a bound (a promise), or a failure to
 * fail over from. `rewrite`: the client gets the answer in another API (answer-rewrite.ts), which
 * only a whole answer can be put in.
 */
export function heldJsonOutcome(
  answer: UpstreamAnswer,
  client: ClientSide,
  held: HeldBody,
  rewrite?: AnswerRewrite,
): AttemptOutcome | Promise<AttemptOutcome> {
  switch (held.kind) {
    case 'failed':
      return heldBodyBrokeOff(answer.status, held.error, client.exchange);
    case 'too_big':
      // A client that left while it was read has nothing to be streamed to: the call is cut.
      if (client.exchange.clientLeft()) {
        client.exchange.abort(new Error('client closed the connection'));
        return { kind: 'client_gone', status: answer.status };
      }
      if (rewrite !== undefined) {
        client.exchange.abort(new Error('answer too big to translate'));
        return {
          kind: 'failed',
          result: 'invalid_body',
          error: `node answered ${answer.status} with a JSON body larger than the gateway holds, which it cannot translate`,
          status: answer.status,
        };
      }
      return streamThrough(answer, client, { eventStream: false, head: held.head });
    case 'complete': {
      // Passed on as it came: checked and read for its usage without being built (jsonMembers).
      // Translated: built, to be put in the other API.
      const parsed = rewrite === undefined ? jsonMembers(held.bytes, STATED_USAGE_MEMBERS) : parsedJson(held.bytes);
      if (parsed === NOT_JSON) {
        return {
          kind: 'failed',
          result: 'invalid_body',
          error: `node answered ${answer.status} with a body that is not valid JSON`,
          status: answer.status,
        };
      }
      if (rewrite === undefined) return deliverHeld(answer, held.bytes, client, wholeAnswerUsage(parsed));
      const translated = Buffer.from(rewrite.json(parsed), 'utf8');
      answer.headers['content-type'] = 'application/json';
      return deliverHeld(answer, translated, client, wholeAnswerUsage(parsed));
    }
  }
}

// ---- the two ends of holding ---------------------------------------------------------------------

/**
 * `usage`: what a 2xx answer stated it used (read from its parsed body by the caller). A client that
 * left while the whole answer was held is charged what the node says it did.
 */
export function deliverHeld(answer: UpstreamAnswer, bytes: Buffer, client: ClientSide, usage?: AnswerUsage): AttemptOutcome {
  const { res } = client;
  if (res.destroyed) return { kind: 'client_gone', status: answer.status, usage };
  res.writeHead(answer.status, clientHead(answer, client, bytes.length));
  client.exchange.heldBytesWritten();
  res.end(bytes);
  const now = client.clock.monotonicMs();
  // A whole answer comes once generated: its tokens over the time since sending (prompt included: errs low).
  const decode =
    answer.status === 200 && usage?.counted === 'usage' && usage.completionTokens !== undefined
      ? { tokens: usage.completionTokens, decodeMs: now - client.sentMs }
      : undefined;
  return { kind: 'delivered', status: answer.status, firstByteMs: now - client.startedMs, usage, decode };
}

/** Nothing reached the client yet, so a body that broke off can still be failed over. */
export function heldBodyBrokeOff(status: number, error: unknown, exchange: AttemptExchange): AttemptOutcome {
  if (exchange.clientLeft()) return { kind: 'client_gone', status };
  if (exchange.timedOut())
    return { kind: 'failed', result: 'timeout', error: `no whole answer within ${exchange.totalTimeoutMs}ms`, status };
  const cause = classify(error);
  return { kind: 'failed', result: cause.result, error: `the node's ${status} answer broke off: ${cause.error}`, status };
}
