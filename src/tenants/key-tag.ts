// A key's digest and its short tag. The tag (a prefix of the key's SHA-256) names a key in logs,
// metrics, /admin/tenants and the dashboard without revealing it: four bytes of a hash cannot be
// turned back into the key, and they are enough to tell an operator's few keys apart.

import { createHash } from 'node:crypto';

export function keyDigest(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

/** A short, non-reversible tag for logs: which key was used, never the key. */
export function keyTag(key: string): string {
  return keyDigest(key).subarray(0, 4).toString('hex');
}
