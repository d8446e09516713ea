// Pure: the prompt of a rerank or score request, for the context guard. A cross-encoder scores
// each (query, document) pair as one sequence, one pair at a time: the request fits a context when
// its longest pair does, whatever the number of documents. So the guard sizes the query with the
// longest document (rerank: `query` + `documents`; score: `text_1` + `text_2`, or vLLM's newer
// `queries` + `documents`), with one template's worth of tokens for the separators.

import { isRerankOrScoreEndpoint } from '#src/config/index.ts';
import { isRecord } from '#src/core/is-record.ts';

export const isRerankOrScore = isRerankOrScoreEndpoint;

/** The texts of a field: a string, an array of strings, or objects with a `text` (Jina/Cohere documents). */
function textsOf(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (isRecord(value) && typeof value.text === 'string') return [value.text];
  if (!Array.isArray(value)) return [];
  return value.flatMap((item) =>
    typeof item === 'string' ? [item] : isRecord(item) && typeof item.text === 'string' ? [item.text] : [],
  );
}

function longest(texts: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestBytes = -1;
  for (const text of texts) {
    const bytes = Buffer.byteLength(text, 'utf8');
    if (bytes > bestBytes) {
      best = text;
      bestBytes = bytes;
    }
  }
  return best;
}

/** Pushes the longest first text and the longest second text; returns the message count (1 pair). */
export function longestPairPieces(json: Readonly<Record<string, unknown>>, pieces: { push(piece: string): unknown }): number {
  const first = textsOf(json.query ?? json.queries ?? json.text_1 ?? json.data_1);
  const second = textsOf(json.documents ?? json.text_2 ?? json.data_2);
  const a = longest(first);
  const b = longest(second);
  if (a !== undefined) pieces.push(a);
  if (b !== undefined) pieces.push(b);
  return a === undefined && b === undefined ? 0 : 1;
}
