// A key's digest and its short tag. The tag (a prefix of the key's SHA-256) names a key in logs,
// metrics, /admin/tenants and the dashboard without revealing it: four bytes of a hash cannot be
// turned back into the key, and they are enough to tell an operator's few keys apart.

import { hash } from 'node:crypto';

export function keyDigest(key: string): Buffer {
  return Buffer.from(keyDigestText(key), 'base64');
}

/** The digest as base64 text: one-shot hashing, no Hash object per call (what a lookup per request uses). */
export function keyDigestText(key: string): string {
  return hash('sha256', key, 'base64');
}

/** A short, non-reversible tag for logs: which key was used, never the key. */
export function keyTag(key: string): string {
  return keyDigest(key).subarray(0, 4).toString('hex');
}
