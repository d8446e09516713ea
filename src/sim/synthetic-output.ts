// What the simulated models "say": a fixed sentence of one-token words for generation, and a
// deterministic unit vector per input for embeddings.

import { seedFromText, seededRandom } from '#src/sim/seeded-random.ts';

// Each word is one token under the sim tokenizer (a space plus at most four letters), so generated
// text re-tokenizes to exactly the reported completion_tokens.
const WORDS = [
  ' The',
  ' sim',
  ' node',
  ' says',
  ' all',
  ' is',
  ' well',
  ' here',
  ' and',
  ' now',
  ' we',
  ' wait',
  ' for',
  ' more',
  ' text',
  ' soon',
] as const;

/** The piece generated at position `index` (0-based) of every completion. */
export function generatedPiece(index: number): string {
  return WORDS[index % WORDS.length] ?? ' sim';
}

export function generatedText(tokenCount: number): string {
  let text = '';
  for (let i = 0; i < tokenCount; i++) text += generatedPiece(i);
  return text;
}

export const EMBEDDING_DIMENSIONS = 64;

/**
 * A unit-length vector that depends only on the input text, in float32 (as the servers compute it):
 * each element is exactly representable, so its float and base64 encodings carry the same numbers.
 */
export function embeddingVector(text: string): number[] {
  const random = seededRandom(seedFromText(text));
  const raw = Array.from({ length: EMBEDDING_DIMENSIONS }, () => random() * 2 - 1);
  const norm = Math.hypot(...raw) || 1;
  return raw.map((x) => Math.fround(x / norm));
}
