// Pure: facts about a request body read from its bytes, without building or re-serialising it.
//
// Why bytes: re-serialising a parsed body changes what the client sent (`"seed": 9007199254740993`
// becomes ...992, `1e400` becomes null, key order and spacing change), so the gateway rewrites only
// the `model` value in place. And the nesting depth is measured here, before anything recursive
// (prompt sizing, JSON.stringify) walks the parsed value and overflows the stack.
//
// The input must already be valid JSON (JSON.parse accepted it); the scan relies on that.

import { appended } from '#src/core/appended.ts';

/** Deepest nesting of arrays and objects a request body may have; deeper bodies get a 400. */
export const MAX_JSON_DEPTH = 128;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

function isSpace(byte: number | undefined): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

export interface BodyScan {
  /** True when arrays and objects nest deeper than the limit (the scan stopped there). */
  readonly tooDeep: boolean;
  /** Byte spans [start, end) of every value of the wanted top-level key, in order. */
  readonly valueSpans: readonly (readonly [number, number])[];
  /** Where each of those members starts (its key's opening quote), in the same order. */
  readonly keyStarts: readonly number[];
  /**
   * Other top-level keys that a case-insensitive decoder (Go's encoding/json) reads as the wanted
   * one (`"Model"`, `"MODEL"`, `"\u004dodel"`… beside `"model"`), decoded, in order; usually empty.
   */
  readonly variantKeys: readonly string[];
  /**
   * Whether some key, at any depth, has an upper-case letter, an escape or a byte beyond ASCII: only
   * then can a key fold onto another (`"max_tokens"` and `"Max_Tokens"`, `"CONTENT"` in a message),
   * which is checked then (model-readings.ts, read-keys.ts). A lower-case body costs one look at
   * the byte after each string.
   */
  readonly casedKeys: boolean;
  /** Index just past the top-level object's `{`; -1 when the body is not an object. */
  readonly afterOpenBrace: number;
  /** Whether the top-level object has no members. */
  readonly emptyObject: boolean;
}

/** Bytes of a string read here before the rest is searched natively (a short key costs no native call). */
const INLINE_STRING_BYTES = 64;

/**
 * Index just past the string whose opening quote is at `start`. Short strings (keys) are read
 * here; past INLINE_STRING_BYTES the closing quote is found by `indexOf` (native, so a long prompt
 * is skipped at memory speed): a quote after an odd run of backslashes is escaped, and the search
 * goes on past it.
 */
function endOfString(raw: Uint8Array, start: number): number {
  const inline = Math.min(raw.length, start + 1 + INLINE_STRING_BYTES);
  let i = start + 1;
  while (i < inline && raw[i] !== QUOTE) i += raw[i] === BACKSLASH ? 2 : 1;
  if (i < inline) return i + 1;
  let quote = raw.indexOf(QUOTE, i);
  while (quote >= 0) {
    let backslashes = 0;
    while (raw[quote - 1 - backslashes] === BACKSLASH) backslashes += 1;
    if (backslashes % 2 === 0) return quote + 1;
    quote = raw.indexOf(QUOTE, quote + 1);
  }
  return raw.length + 1;
}

const NO_KEYS: readonly string[] = Object.freeze([]);
/** A body without the wanted key (or where it was found once, see appended.ts) builds no list of spans. */
const NO_SPANS: readonly (readonly [number, number])[] = Object.freeze([]);
const NO_STARTS: readonly number[] = Object.freeze([]);

/** How a top-level key token compares with the wanted key. */
const OTHER = 0;
const EXACT = 1;
/** Not the key, but the same under case folding: a case-insensitive decoder reads it as the key. */
const VARIANT = 2;
const MATCH_BITS = 3;
/** Flag: the key token has an upper-case ASCII letter, an escape or a byte beyond ASCII (it may fold onto another key). */
const CASED = 4;

function asciiLower(byte: number): number {
  return byte >= 0x41 && byte <= 0x5a ? byte | 0x20 : byte;
}

/**
 * Whether the string token raw[start, end) is `wanted` (its JSON encoding) or a case variant of it
 * (with the CASED flag): compared byte for byte in place (ASCII case folded), decoded only when it
 * holds an escape (`"mod\u0065l"`) or a byte beyond ASCII that could fold to the key, so the scan
 * allocates nothing per key.
 */
function keyMatch(raw: Uint8Array, start: number, end: number, wanted: ArrayLike<number>, key: string): number {
  const sameLength = end - start === wanted.length;
  let exact = sameLength;
  let folded = sameLength;
  let cased = 0;
  for (let i = start; i < end; i += 1) {
    const byte = raw[i]!;
    // An escape is at most 6 bytes per character, a UTF-8 character at most 4: longer tokens cannot be the key.
    if (byte === BACKSLASH || byte > 0x7f)
      return CASED | (end - start <= 6 * key.length + 2 ? decodedKeyMatch(raw, start, end, key) : OTHER);
    if (byte >= 0x41 && byte <= 0x5a) cased = CASED;
    if (!folded) continue;
    const want = wanted[i - start]!;
    if (byte !== want) {
      exact = false;
      if (asciiLower(byte) !== asciiLower(want)) folded = false;
    }
  }
  return cased | (exact ? EXACT : folded ? VARIANT : OTHER);
}

function decodedKeyMatch(raw: Uint8Array, start: number, end: number, key: string): number {
  const decoded = JSON.parse(Buffer.from(raw.subarray(start, end)).toString('utf8')) as string;
  if (decoded === key) return EXACT;
  return foldCase(decoded) === foldCase(key) ? VARIANT : OTHER;
}

/**
 * A string with every character folded by Unicode simple case mapping: upper case, then lower
 * (the Kelvin sign folds to `k`, the long s to `s`). It matches at least every pair Go's
 * encoding/json folds (unicode.SimpleFold); a few more (dotless i) only refuse more, never less.
 */
export function foldCase(text: string): string {
  let out = '';
  for (const char of text) {
    const upper = char.toUpperCase();
    const one = upper.length === char.length ? upper : char;
    const lower = one.toLowerCase();
    out += lower.length === one.length ? lower : one;
  }
  return out;
}

/** The key token's text, decoded (for a refusal naming it). */
export function keyText(raw: Uint8Array, start: number, end: number): string {
  return JSON.parse(Buffer.from(raw.subarray(start, end)).toString('utf8')) as string;
}

/**
 * Whether the string token raw[start, end) is an object's key (the next byte past spaces is a colon:
 * in valid JSON only a key is followed by one) that has an upper-case ASCII letter, an escape or a
 * byte beyond ASCII.
 */
function isCasedKey(raw: Uint8Array, start: number, end: number): boolean {
  let next = end;
  while (isSpace(raw[next])) next += 1;
  if (raw[next] !== COLON) return false;
  for (let i = start + 1; i < end - 1; i += 1) {
    const byte = raw[i]!;
    if ((byte >= 0x41 && byte <= 0x5a) || byte === BACKSLASH || byte > 0x7f) return true;
  }
  return false;
}

function trimEnd(raw: Uint8Array, start: number, end: number): number {
  while (end > start && isSpace(raw[end - 1])) end -= 1;
  return end;
}

/**
 * The bytes of `key`'s JSON encoding: its character codes when they are all ASCII (every key the
 * gateway scans for; no buffer is built for them on every request), else its UTF-8 bytes.
 */
function encodedKey(key: string): ArrayLike<number> {
  const json = JSON.stringify(key);
  const codes: number[] = [];
  for (let i = 0; i < json.length; i += 1) {
    const code = json.charCodeAt(i);
    if (code > 0x7f) return Buffer.from(json, 'utf8');
    codes.push(code);
  }
  return codes;
}

/** The keys the request path scans for, encoded once (a scan for another key encodes it then). */
const ENCODED_KEYS: ReadonlyMap<string, ArrayLike<number>> = new Map(
  ['model', 'stream_options', 'include_usage', 'usage'].map((key) => [key, encodedKey(key)]),
);

/** One pass over a valid JSON text: its depth, and where the top-level `key`'s values are. */
export function scanBody(raw: Uint8Array, key: string, maxDepth: number = MAX_JSON_DEPTH): BodyScan {
  const wanted = ENCODED_KEYS.get(key) ?? encodedKey(key);
  // Grown where first needed (core/appended.ts): an empty array's first push reserves seventeen slots.
  let valueSpans: (readonly [number, number])[] | undefined;
  let keyStarts: number[] | undefined;
  let variantKeys: string[] | undefined; // built only for a body that has one
  let casedKeys = false;
  let depth = 0;
  let afterOpenBrace = -1;
  let topIsObject = false;
  let keyExpected = false;
  let members = 0;
  let valueStart = -1; // start of the wanted key's value while it is being read, else -1
  let awaitingValue = false; // the wanted key was read; its value starts after the colon
  let tooDeep = false; // nested past maxDepth: the scan stops there
  for (let i = 0; i < raw.length; i++) {
    const byte = raw[i]!;
    if (isSpace(byte)) continue;
    if (awaitingValue && byte !== COLON) {
      valueStart = i;
      awaitingValue = false;
    }
    if (byte === QUOTE) {
      const end = endOfString(raw, i);
      if (topIsObject && depth === 1 && keyExpected) {
        keyExpected = false;
        members += 1;
        const found = keyMatch(raw, i, end, wanted, key);
        if ((found & CASED) !== 0) casedKeys = true;
        const match = found & MATCH_BITS;
        awaitingValue = match === EXACT;
        if (awaitingValue) keyStarts = appended(keyStarts, i);
        else if (match === VARIANT) (variantKeys ??= []).push(keyText(raw, i, end));
      } else if (!casedKeys && depth > 1 && isCasedKey(raw, i, end)) {
        casedKeys = true;
      }
      i = end - 1;
    } else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
      depth += 1;
      if (depth > maxDepth) {
        tooDeep = true;
        break;
      }
      if (depth === 1 && byte === OPEN_BRACE) {
        topIsObject = true;
        keyExpected = true;
        afterOpenBrace = i + 1;
      }
    } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
      // The wanted key's value ends at the top level's close or comma (no closure per scan for it).
      if (depth === 1 && valueStart >= 0) {
        valueSpans = appended(valueSpans, [valueStart, trimEnd(raw, valueStart, i)] as const);
        valueStart = -1;
      }
      depth -= 1;
    } else if (byte === COMMA && depth === 1) {
      if (valueStart >= 0) {
        valueSpans = appended(valueSpans, [valueStart, trimEnd(raw, valueStart, i)] as const);
        valueStart = -1;
      }
      keyExpected = topIsObject;
    }
  }
  return {
    tooDeep,
    valueSpans: valueSpans ?? NO_SPANS,
    keyStarts: keyStarts ?? NO_STARTS,
    variantKeys: variantKeys ?? NO_KEYS,
    casedKeys,
    afterOpenBrace,
    emptyObject: members === 0,
  };
}

/**
 * The body with every value of the top-level `key` replaced by `value` (JSON-encoded), or the
 * member added first when the key is absent. Every other byte stays as the client sent it.
 */
export function withTopLevelString(raw: Buffer, scan: BodyScan, key: string, value: string): Buffer {
  return withTopLevelJson(raw, scan, key, JSON.stringify(value));
}

/** As withTopLevelString, with `json` (a JSON text, written as is) for the value. */
export function withTopLevelJson(raw: Buffer, scan: BodyScan, key: string, json: string): Buffer {
  const encoded = Buffer.from(json, 'utf8');
  if (scan.valueSpans.length === 0) {
    const member = Buffer.from(`${JSON.stringify(key)}:${json}${scan.emptyObject ? '' : ','}`, 'utf8');
    return Buffer.concat([raw.subarray(0, scan.afterOpenBrace), member, raw.subarray(scan.afterOpenBrace)]);
  }
  const parts: Buffer[] = [];
  let from = 0;
  for (const [start, end] of scan.valueSpans) {
    parts.push(raw.subarray(from, start), encoded);
    from = end;
  }
  parts.push(raw.subarray(from));
  return Buffer.concat(parts);
}

/**
 * The object text without the top-level members of the scanned key whose value is exactly
 * `value` (e.g. `null`), each with one comma next to it; every other byte kept. The input is
 * returned itself when no member matches.
 */
export function withoutTopLevelMembers(raw: Buffer, scan: BodyScan, value: Buffer): Buffer {
  const cuts: (readonly [number, number])[] = [];
  scan.valueSpans.forEach(([start, end], i) => {
    const keyStart = scan.keyStarts[i];
    if (keyStart === undefined || !raw.subarray(start, end).equals(value)) return;
    let after = end;
    while (isSpace(raw[after])) after += 1;
    if (raw[after] === COMMA) {
      after += 1;
      while (isSpace(raw[after])) after += 1;
      cuts.push([keyStart, after]);
      return;
    }
    let before = keyStart;
    while (isSpace(raw[before - 1])) before -= 1;
    cuts.push([raw[before - 1] === COMMA ? before - 1 : keyStart, end]);
  });
  if (cuts.length === 0) return raw;
  const parts: Buffer[] = [];
  let from = 0;
  for (const [start, end] of cuts) {
    if (start < from) continue;
    parts.push(raw.subarray(from, start));
    from = end;
  }
  parts.push(raw.subarray(from));
  return Buffer.concat(parts);
}
