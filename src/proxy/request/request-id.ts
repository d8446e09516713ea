// The request id: the client's `x-request-id` when it is well-formed and bounded, else one the
// gateway makes. The same id goes to the node (or the next site) and back to the client, and names
// the request in the request log, so a client's own id can be followed end to end. A made id is a
// random (version 4) UUID (docs/observability.md).

import { Buffer } from 'node:buffer';
import { randomFillSync } from 'node:crypto';

/** Longest client id accepted (a UUID is 36; a W3C trace id 32). */
export const MAX_REQUEST_ID_LENGTH = 128;

/** Visible ASCII without quotes, backslashes or separators a log reader or header parser could trip on. */
const WELL_FORMED = /^[A-Za-z0-9._:+=/@-]+$/;

/** The client's id when it is one well-formed, bounded value; undefined = make one. */
export function clientRequestId(header: string | string[] | undefined): string | undefined {
  if (typeof header !== 'string') return undefined;
  if (header.length === 0 || header.length > MAX_REQUEST_ID_LENGTH) return undefined;
  return WELL_FORMED.test(header) ? header : undefined;
}

/** The id this request goes by: the client's (if well-formed), else a new one. */
export function requestIdFor(header: string | string[] | undefined, make: () => string): string {
  return clientRequestId(header) ?? make();
}

/** Ids' worth of random bytes drawn at once (node's randomUUID keeps the same entropy cache). */
const IDS_PER_DRAW = 128;
/** The hex digits as ASCII codes. */
const HEX = Buffer.from('0123456789abcdef', 'latin1');
const DASH = 0x2d;

/**
 * Makes random version-4 UUIDs (RFC 9562: 122 random bits from node:crypto, the version and variant
 * bits set), as `crypto.randomUUID` does, each built as one string: its 36 characters are written
 * into a buffer kept by the maker and read out once (randomUUID joins 20 pieces per id, ~0.6 KB of
 * intermediate strings on every request). One maker per request plane; its state is its own.
 */
export function uuidMaker(): () => string {
  const random = Buffer.allocUnsafe(16 * IDS_PER_DRAW);
  const text = Buffer.allocUnsafe(36);
  let at = random.length;
  return () => {
    if (at === random.length) {
      randomFillSync(random);
      at = 0;
    }
    let out = 0;
    for (let i = 0; i < 16; i += 1) {
      let byte = random[at + i] as number;
      if (i === 6) byte = (byte & 0x0f) | 0x40;
      else if (i === 8) byte = (byte & 0x3f) | 0x80;
      if (i === 4 || i === 6 || i === 8 || i === 10) text[out++] = DASH;
      text[out++] = HEX[byte >> 4] as number;
      text[out++] = HEX[byte & 0x0f] as number;
    }
    at += 16;
    return text.toString('latin1', 0, 36);
  };
}
