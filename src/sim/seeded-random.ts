// A deterministic random source (mulberry32) for ids and vectors, so a sim node needs no global
// randomness; callers may inject their own `() => number` instead.

/** FNV-1a over the UTF-16 units of `text`: a stable 32-bit seed. */
export function seedFromText(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/** Returns numbers in [0, 1); the same seed gives the same sequence. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const ALNUM = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const HEX = '0123456789abcdef';

function pick(alphabet: string, random: () => number, length: number): string {
  let text = '';
  for (let i = 0; i < length; i++) text += alphabet[Math.floor(random() * alphabet.length)] ?? '0';
  return text;
}

/** `length` characters from [0-9A-Za-z], as in llama.cpp's `chatcmpl-` ids. */
export function alnumId(random: () => number, length: number): string {
  return pick(ALNUM, random, length);
}

/** `length` lowercase hex digits, as in vLLM's and SGLang's uuid-based ids. */
export function hexId(random: () => number, length: number): string {
  return pick(HEX, random, length);
}
