// One HTTP exchange whose answer is read as JSON, bounded in time (the whole exchange) and bytes.
// Never throws.

import { requestBoundedText, type BoundedRequestOptions } from './bounded-text.ts';

export type JsonAnswer =
  | { readonly ok: true; readonly status: number; readonly body: unknown }
  | { readonly ok: false; readonly status: number | undefined; readonly error: string };

export type BoundedJsonOptions = BoundedRequestOptions;

export async function requestBoundedJson(url: string, options: BoundedJsonOptions): Promise<JsonAnswer> {
  const answer = await requestBoundedText(url, options);
  if (!answer.ok) return answer;
  try {
    return { ok: true, status: answer.status, body: JSON.parse(answer.text) as unknown };
  } catch {
    return { ok: false, status: answer.status, error: `answer is not JSON (HTTP ${answer.status})` };
  }
}
