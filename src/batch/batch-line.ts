// One line of a batch input file (OpenAI's shape: `{"custom_id", "method": "POST", "url", "body"}`),
// checked alone (pure): what is wrong with it, worded with its line number, or the request it
// asks for. The upload checks every line as it streams (file-upload.ts); a job reads its lines
// again from the file it is given (batch-create.ts).

import type { InferenceEndpoint } from '#src/config/index.ts';

/** The endpoints a batch line may ask for (OpenAI's Batch API's, and Anthropic's Messages). */
export const BATCH_ENDPOINTS = [
  '/v1/chat/completions',
  '/v1/completions',
  '/v1/embeddings',
  '/v1/responses',
  '/v1/messages',
] as const satisfies readonly InferenceEndpoint[];
export type BatchEndpoint = (typeof BATCH_ENDPOINTS)[number];

export const isBatchEndpoint = (text: unknown): text is BatchEndpoint =>
  typeof text === 'string' && (BATCH_ENDPOINTS as readonly string[]).includes(text);

/** The longest custom_id taken. */
export const MAX_CUSTOM_ID_CHARS = 512;

export interface LineRequest {
  readonly customId: string;
  readonly url: BatchEndpoint;
  readonly model: string;
  /** The body as JSON text (as sent to the endpoint). */
  readonly body: string;
}

/** A line's problem: its number and what is wrong. */
export interface LineProblem {
  readonly line: number;
  readonly message: string;
}

/** A blank line carries no request (a file's last newline, a blank line between requests). */
export const isBlank = (text: string): boolean => text.trim() === '';

/** Checks one line; `seen`: the custom_ids of the lines before it (this one is added when it is good). */
export function checkLine(text: string, line: number, seen: Set<string>): LineRequest | LineProblem {
  const problem = (message: string): LineProblem => ({ line, message: `line ${line}: ${message}` });
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return problem(`not valid JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return problem('must be a JSON object {"custom_id", "method", "url", "body"}');
  const entry = value as Record<string, unknown>;
  const customId = entry.custom_id;
  if (typeof customId !== 'string' || customId === '') return problem('`custom_id` must be a non-empty string');
  if (customId.length > MAX_CUSTOM_ID_CHARS) return problem(`\`custom_id\` is longer than ${MAX_CUSTOM_ID_CHARS} characters`);
  if (seen.has(customId))
    return problem(`\`custom_id\` "${customId.slice(0, 80)}" appears on an earlier line; each must be unique`);
  if (entry.method !== 'POST') return problem('`method` must be "POST"');
  if (!isBatchEndpoint(entry.url)) return problem(`\`url\` must be one of ${BATCH_ENDPOINTS.join(', ')}`);
  const body = entry.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return problem('`body` must be a JSON object');
  const fields = body as Record<string, unknown>;
  if (typeof fields.model !== 'string' || fields.model === '') return problem('`body.model` must be a non-empty string');
  if (fields.stream === true) return problem('`body.stream` must not be true: a batch line is answered whole');
  seen.add(customId);
  return { customId, url: entry.url, model: fields.model, body: JSON.stringify(body) };
}

export const isProblem = (checked: LineRequest | LineProblem): checked is LineProblem => 'message' in checked;
