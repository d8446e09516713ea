// Pure: one reader for every kind's refusal dialect (PROTOCOLS.md §6.1). A kind names only how it
// says "too long" and "no such model"; the figures are read the same way for all, from every field
// any kind uses, so a meaning does not depend on which kind recognised it.

import { isRecord } from '#src/core/is-record.ts';
import { positiveNumber } from './json-fields.ts';
import type { RefusalMeaning } from './server-kind.ts';

export interface RefusalDialect {
  /** `error.type` values that mean the prompt is over the context (llama.cpp). */
  readonly overflowTypes: readonly string[];
  /** Messages that, with HTTP 400, mean the prompt is over the context. */
  readonly overflowTexts: readonly RegExp[];
  /** Messages that mean the model is not there (with HTTP 404, or a message saying "not found"). */
  readonly notFoundTexts: readonly RegExp[];
}

/** The number after `context length is|of`, or in `context length (N tokens)` (vLLM, SGLang, OpenAI). */
function contextFromText(message: string): number | undefined {
  const match = /context length (?:is|of) (\d+)/i.exec(message) ?? /context length \((\d+) tokens\)/i.exec(message);
  return match?.[1] === undefined ? undefined : Number(match[1]);
}

export function readRefusal(dialect: RefusalDialect, status: number, body: unknown): RefusalMeaning | undefined {
  if ((status !== 400 && status !== 404) || !isRecord(body)) return undefined;
  // Nested {"error":{...}} (llama.cpp, vLLM, OpenAI) or flat {"object":"error",...} (old vLLM, SGLang).
  const error = isRecord(body.error) ? body.error : body;
  const message = typeof error.message === 'string' ? error.message : typeof body.error === 'string' ? body.error : '';
  const type = error.type;
  const typeSaysOverflow = typeof type === 'string' && dialect.overflowTypes.includes(type);
  if (typeSaysOverflow || (status === 400 && dialect.overflowTexts.some((re) => re.test(message)))) {
    return {
      kind: 'context_overflow',
      nCtx: positiveNumber(error.n_ctx) ?? contextFromText(message),
      promptTokens: positiveNumber(error.n_prompt_tokens),
      message,
    };
  }
  if (dialect.notFoundTexts.some((re) => re.test(message)) && (status === 404 || /not found/i.test(message))) {
    return { kind: 'model_not_found', message };
  }
  return undefined;
}

/**
 * The meaning when several dialects are read at once: an overflow wins over a "not found", so a
 * message one dialect calls an overflow is one whichever dialect is asked first.
 */
export function firstMeaning(meanings: readonly (RefusalMeaning | undefined)[]): RefusalMeaning | undefined {
  return meanings.find((m) => m?.kind === 'context_overflow') ?? meanings.find((m) => m !== undefined);
}
