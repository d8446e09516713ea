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
  /** Everything else the client is owed: streamed through as it arrives. */
  | { readonly kind: 'stream'; readonly eventStream: boolean };

/** How the answer's body is encoded: one the gateway can decode, or `unknown` (passed on as is). */
export type BodyCoding = 'identity' | 'gzip' | 'deflate' | 'br' | 'unknown';

/** Reads `content-encoding`; more than one coding (other than identity) counts as unknown. */
export function bodyCoding(header: string | readonly string[] | undefined): BodyCoding {
  const text = typeof header === 'string' ? header : (header ?? []).join(',');
  const codings = text
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
  if (codings.length === 0) return 'identity';
  if (codings.length > 1) return 'unknown';
  const [coding] = codings;
  if (coding === 'gzip' || coding === 'x-gzip') return 'gzip';
  if (coding === 'deflate' || coding === 'br') return coding;
  return 'unknown';
}

export interface ResponseFacts {
  readonly status: number;
  readonly contentType: string;
  readonly coding: BodyCoding;
  /** Asked only for a 5xx: true means hide it and fail over, false means pass it on. */
  readonly canFailOver: () => boolean;
  /**
   * False for a remote site: no error answer of its own reaches the client (this site answers in its
   * own terms); any 3xx-5xx is read for a refusal and otherwise fails the attempt. Default true.
   */
  readonly passOnErrors?: boolean | undefined;
}

export function isEventStream(contentType: string): boolean {
  return /^\s*text\/event-stream\b/i.test(contentType);
}

export function isJson(contentType: string): boolean {
  return /\bjson\b/i.test(contentType);
}

export function planResponse(facts: ResponseFacts): ResponsePlan {
  const { status, contentType } = facts;
  // Final answers are 2xx-5xx; interim 1xx answers never get here (undici skips or rejects them),
  // and an odd status such as 999 means the node speaks something other than HTTP as we know it.
  if (!Number.isInteger(status) || status < 200 || status > 599) {
    return { kind: 'fail', result: 'invalid_body', error: `node answered with status ${status}, outside 200-599` };
  }
  // A body in a coding the gateway cannot read is passed on as it is, uninspected.
  const readable = facts.coding !== 'unknown';
  if (facts.passOnErrors === false && status >= 300) {
    // A remote site's error is read (bounded) for what it means, never passed on (inspect-refusal.ts).
    if (readable) return { kind: 'inspect_error' };
    return { kind: 'fail', result: status >= 500 ? 'http_5xx' : 'http_error', error: `answered ${status}` };
  }
  if (status >= 500 && facts.canFailOver()) return { kind: 'fail', result: 'http_5xx', error: `node answered ${status}` };
  if ((status === 400 || status === 404) && readable) return { kind: 'inspect_error' };
  const eventStream = isEventStream(contentType);
  if (status >= 200 && status < 300 && !eventStream) {
    if (isJson(contentType)) return readable ? { kind: 'hold_json' } : { kind: 'stream', eventStream: false };
    // An inference answer is JSON or SSE; an HTML page here is a captive portal or a misrouted
    // proxy, never a completion the client could use.
    const shown = contentType === '' ? 'no content-type' : `content-type ${JSON.stringify(contentType.slice(0, 80))}`;
    return { kind: 'fail', result: 'invalid_body', error: `node answered ${status} with ${shown}, not JSON or an event stream` };
  }
  return { kind: 'stream', eventStream };
}
