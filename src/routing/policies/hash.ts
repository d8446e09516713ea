// Pure 32-bit hashes for key-based policies: FNV-1a over a string, and a finaliser (murmur3's
// fmix32) that mixes two hashes into one evenly spread value.

/** `basis`: FNV's offset basis; another one gives an independent hash of the same text. */
export function fnv1a32(text: string, basis = 0x811c9dc5): number {
  let hash = basis;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** An evenly spread 32-bit value for the pair (a, b); a different b gives an unrelated value. */
export function mix32(a: number, b: number): number {
  let h = (a ^ Math.imul(b, 0x9e3779b1)) >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
