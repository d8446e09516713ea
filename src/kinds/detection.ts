// Pure readers shared by the kinds' detectors: what a probe's answers say, never trusting them.

import { isRecord } from '#src/core/is-record.ts';
import type { ProbeAnswers } from './server-kind.ts';

/** Every kind answers the OpenAI listing; its extra fields are what tell most of them apart. */
export const LISTING_PATH = '/v1/models';

/** The body of a 2xx JSON answer to `path`; undefined for no answer, an error or not JSON. */
export function okBody(answers: ProbeAnswers, path: string): unknown {
  const answer = answers(path);
  return answer?.ok === true && answer.status >= 200 && answer.status < 300 ? answer.body : undefined;
}

/** The listing's entries, when it answered the OpenAI list shape (`data` may be Ollama's null). */
export function listingEntries(answers: ProbeAnswers): readonly unknown[] | undefined {
  const body = okBody(answers, LISTING_PATH);
  if (!isRecord(body) || !('data' in body)) return undefined;
  if (body.data === null) return [];
  return Array.isArray(body.data) ? body.data : undefined;
}

/** Whether any listed model says it is owned by `owner` (vLLM, SGLang and llama.cpp name themselves). */
export function listedAsOwnedBy(answers: ProbeAnswers, owner: string): boolean {
  return (listingEntries(answers) ?? []).some((entry) => isRecord(entry) && entry.owned_by === owner);
}
