// A pinned Ed25519 public key as written in `[[mesh.sites]] public_key`: the raw 32 bytes in
// base64url without padding (what `switchyard keygen` prints). Strict: exactly 43 characters of
// the URL-safe alphabet that re-encode to themselves, so one key has one spelling and a typo or a
// key in another form (PEM, hex, padded base64) is named as such rather than silently misread.

import { invalid, valid, type ParseResult } from '#src/config/parse-result.ts';

export const ED25519_PUBLIC_KEY_BYTES = 32;
const B64URL_32 = /^[A-Za-z0-9_-]{43}$/;

export function parsePublicKey(text: string): ParseResult<Uint8Array> {
  if (!B64URL_32.test(text)) {
    return invalid(
      `must be a raw 32-byte Ed25519 public key in base64url without padding (43 characters of A-Z a-z 0-9 - _), as printed by switchyard keygen; got ${text.length} characters`,
    );
  }
  const bytes = Buffer.from(text, 'base64url');
  if (bytes.length !== ED25519_PUBLIC_KEY_BYTES || bytes.toString('base64url') !== text) {
    return invalid('does not decode to exactly 32 bytes of base64url (the last character is not canonical)');
  }
  return valid(new Uint8Array(bytes));
}
