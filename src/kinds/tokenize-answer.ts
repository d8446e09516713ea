// Pure: the token count in a tokenize answer. llama.cpp gives `{"tokens":[...]}`, vLLM and SGLang add
// `count`; the count is taken when present, else the tokens are counted, for every dialect alike.

import { isRecord } from '#src/core/is-record.ts';

export function tokenCountOf(body: unknown): number | undefined {
  if (!isRecord(body)) return undefined;
  if (typeof body.count === 'number') return body.count;
  return Array.isArray(body.tokens) ? body.tokens.length : undefined;
}
