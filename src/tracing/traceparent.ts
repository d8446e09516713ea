// Pure: the W3C Trace Context `traceparent` header (https://www.w3.org/TR/trace-context/), read and
// written. A value that is not one well-formed header is no parent at all: the request starts a
// new trace (the spec's rule), it is never an error.

export interface ParentContext {
  /** 32 lower-case hex digits, not all zero. */
  readonly traceId: string;
  /** 16 lower-case hex digits, not all zero. */
  readonly spanId: string;
  /** The trace-flags byte (bit 0: sampled). */
  readonly flags: number;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ALL_ZERO = /^0+$/;

/** The parent a `traceparent` names; undefined for none, a repeated header, or a malformed one. */
export function parseTraceparent(header: string | readonly string[] | undefined): ParentContext | undefined {
  if (header === undefined || typeof header !== 'string') return undefined;
  const match = TRACEPARENT.exec(header.trim());
  if (match === null) return undefined;
  const [, version = '', traceId = '', spanId = '', flags = '', rest] = match;
  // Version ff is invalid; version 00 has exactly four fields; a later version may add fields after a dash.
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  if (ALL_ZERO.test(traceId) || ALL_ZERO.test(spanId)) return undefined;
  return { traceId, spanId, flags: Number.parseInt(flags, 16) };
}

/** The `traceparent` of a span (version 00). */
export function formatTraceparent(traceId: string, spanId: string, flags: number): string {
  return `00-${traceId}-${spanId}-${(flags & 0xff).toString(16).padStart(2, '0')}`;
}

/** The longest `tracestate` passed on (the spec's limit is 32 members; 512 bytes is what it asks to keep). */
export const MAX_TRACESTATE = 512;

/** One `tracestate` value to keep, or undefined (absent, repeated headers joined per RFC 9110, or too long). */
export function tracestateOf(header: string | readonly string[] | undefined): string | undefined {
  const text = typeof header === 'string' ? header : header?.join(',');
  if (text === undefined || text.trim() === '' || text.length > MAX_TRACESTATE) return undefined;
  return text;
}
