// RFC 9530 Content-Digest with sha-256: what a forwarding site states of the body it signs, and
// what the receiving site checks once it has read the body.

import { createHash, timingSafeEqual } from 'node:crypto';

export function contentDigest(body: Uint8Array): string {
  return `sha-256=:${createHash('sha256').update(body).digest('base64')}:`;
}

/** Whether the header's sha-256 member matches `body` (other algorithms are ignored; none = no match). */
export function digestMatches(header: string | undefined, body: Uint8Array): boolean {
  if (header === undefined) return false;
  // A structured-field dictionary: `sha-256=:<base64>:, sha-512=:...:`.
  const match = /(?:^|,)\s*sha-256\s*=\s*:([A-Za-z0-9+/=]*):/i.exec(header);
  if (match?.[1] === undefined) return false;
  const stated = Buffer.from(match[1], 'base64');
  const actual = createHash('sha256').update(body).digest();
  return stated.length === actual.length && timingSafeEqual(stated, actual);
}
