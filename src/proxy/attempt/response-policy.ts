// Pure: what the gateway does with a node's answer to an inference request, judged from its status
// line and headers before any of it reaches the client (docs/security.md, "What the gateway passes
// on from a node").

import type { AttemptFailure } from './attempt-result.ts';

export type ResponsePlan =
  /** Nothing reaches the client; another node may be tried. */
  | { readonly kind: 'fail'; readonly result: AttemptFailure; readonly error: string }
  /** A 400/404 (any 3xx-5xx from a remote site): read (bounded) to recognise a refusal the gateway can act on. */
  | { readonly kind: 'inspect_error' }
  /** A whole 2xx JSON answer: held until complete and parsed, so a broken one can be failed over. */
  | { readonly kind: 'hold_json' }
  /**
   * Everything else the client is owed: streamed through as it arrives. `ndjson`: newline-delimited
   * JSON (Ollama's native streams), whose generated text is counted as it passes, as an SSE stream's.
   */
  | { readonly kind: 'stream'; readonly eventStream: boolean; readonly ndjson?: boolean };

// The plans that carry nothing of the answer: one object each, not one per answer.
const NDJSON_STREAM: ResponsePlan = Object.freeze({ kind: 'stream', eventStream: false, ndjson: true });
const INSPECT_ERROR: ResponsePlan = Object.freeze({ kind: 'inspect_error' });
const HOLD_JSON: ResponsePlan = Object.freeze({ kind: 'hold_json' });

/** A content coding the gateway decodes (undici's set; node:zlib in Node 24 reads zstd). */
export type ContentCoding = 'gzip' | 'deflate' | 'br' | 'zstd';

/** The codings named by `gzip`, `x-gzip`, `deflate`, `br` and `zstd`, as the decoders know them. */
export const DECODABLE_CODINGS: Readonly<Record<string, ContentCoding>> = Object.freeze({
  gzip: 'gzip',
  'x-gzip': 'gzip',
  deflate: 'deflate',
  br: 'br',
  zstd: 'zstd',
});

/** More layers than this is no answer a server sends; it counts as a coding the gateway cannot read. */
export const MAX_CODING_LAYERS = 3;

/**
 * How the answer's body is encoded: plain, in codings the gateway decodes (in the order they were
 * applied, as `content-encoding` lists them), or in one it cannot read (`name` says which).
 */
export type BodyCoding =
  | { readonly kind: 'identity' }
  | { readonly kind: 'encoded'; readonly codings: readonly ContentCoding[] }
  | { readonly kind: 'unknown'; readonly name: string };

const IDENTITY: BodyCoding = Object.freeze({ kind: 'identity' });

/** Reads `content-encoding`: every coding listed must be one the gateway decodes. */
export function bodyCoding(header: string | readonly string[] | undefined): BodyCoding {
  // The answer the gateway asked for (identity), told by no header: nothing to split.
  if (header === undefined) return IDENTITY;
  const text = typeof header === 'string' ? header : header.join(',');
  const names = text
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
  if (names.length === 0) return IDENTITY;
  if (names.length > MAX_CODING_LAYERS) return { kind: 'unknown', name: names.join(', ') };
  const codings: ContentCoding[] = [];
  for (const name of names) {
    const coding = Object.hasOwn(DECODABLE_CODINGS, name) ? DECODABLE_CODINGS[name] : undefined;
    if (coding === undefined) return { kind: 'unknown', name: name.slice(0, 40) };
    codings.push(coding);
  }
  return { kind: 'encoded', codings };
}

export interface ResponseFacts {
  readonly status: number;
  readonly contentType: string;
  /** The endpoint answers other media too (audio, a plain-text transcript): a 2xx in them streams through. */
  readonly anyMedia?: boolean | undefined;
  readonly coding: BodyCoding;
  /** Asked only for a 5xx: true means hide it and fail over, false means pass it on. */
  readonly canFailOver: () => boolean;
  /**
   * False for a remote site: no error answer of its own reaches the client (this site answers in its
   * own terms); any 3xx-5xx is read for a refusal and otherwise fails the attempt. Default true.
   */
  readonly passOnErrors?: boolean | undefined;
  /** The client gets the answer in another API (a translation): every error passed on is read, to be reworded. */
  readonly rewordsErrors?: boolean | undefined;
}

// Built once: a regular expression literal is a new object each time it is evaluated (these run
// on every answer). No `g` or `y` flag, so `test` keeps no state between calls.
const EVENT_STREAM = /^\s*text\/event-stream\b/i;
const NDJSON = /^\s*application\/(x-)?ndjson\b/i;
const JSON_TYPE = /\bjson\b/i;

export function isEventStream(contentType: string): boolean {
  return EVENT_STREAM.test(contentType);
}

/** Newline-delimited JSON (Ollama's native streams: `application/x-ndjson`, one object a line). */
export function isNdjson(contentType: string): boolean {
  return NDJSON.test(contentType);
}

export function isJson(contentType: string): boolean {
  return JSON_TYPE.test(contentType);
}

export function planResponse(facts: ResponseFacts): ResponsePlan {
  const { status, contentType } = facts;
  // Final answers are 2xx-5xx; interim 1xx answers never get here (undici skips or rejects them),
  // and an odd status such as 999 means the node speaks something other than HTTP as we know it.
  if (!Number.isInteger(status) || status < 200 || status > 599) {
    return { kind: 'fail', result: 'invalid_body', error: `node answered with status ${status}, outside 200-599` };
  }
  if (facts.passOnErrors === false && status >= 300) {
    // A remote site's error is read (bounded) for what it means, never passed on (inspect-refusal.ts).
    if (facts.coding.kind !== 'unknown') return INSPECT_ERROR;
    return { kind: 'fail', result: status >= 500 ? 'http_5xx' : 'http_error', error: `answered ${status}` };
  }
  if (status >= 500 && facts.canFailOver()) return { kind: 'fail', result: 'http_5xx', error: `node answered ${status}` };
  // A body in a coding the gateway cannot read is never passed on: the client asked for none (the
  // gateway asks nodes for identity), and it could not be inspected either.
  if (facts.coding.kind === 'unknown') {
    const known = [...new Set(Object.keys(DECODABLE_CODINGS))].join(', ');
    return {
      kind: 'fail',
      result: 'invalid_body',
      error: `node answered ${status} in content-encoding ${JSON.stringify(facts.coding.name)}, which the gateway cannot decode (it decodes ${known})`,
    };
  }
  // A 405 may say the node has no such endpoint (a path it serves for other methods only).
  if (status === 400 || status === 404 || status === 405) return INSPECT_ERROR;
  if (status >= 300 && facts.rewordsErrors === true) return INSPECT_ERROR;
  const eventStream = isEventStream(contentType);
  if (status >= 200 && status < 300 && !eventStream) {
    // An NDJSON stream passes through as it comes, like an event stream (its last line states the usage).
    if (isNdjson(contentType)) return NDJSON_STREAM;
    if (isJson(contentType)) return HOLD_JSON;
    if (facts.anyMedia === true) return { kind: 'stream', eventStream: false };
    // An inference answer is JSON or SSE; an HTML page here is a captive portal or a misrouted
    // proxy, never a completion the client could use.
    const shown = contentType === '' ? 'no content-type' : `content-type ${JSON.stringify(contentType.slice(0, 80))}`;
    return { kind: 'fail', result: 'invalid_body', error: `node answered ${status} with ${shown}, not JSON or an event stream` };
  }
  return { kind: 'stream', eventStream };
}
