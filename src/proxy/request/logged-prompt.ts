// Pure: `[log] bodies = true` — the prompt's text for the request log line, bounded in bytes: the
// same pieces prompt sizing reads (prompt-size.ts: messages' text, a completion's prompt, an
// embedding's input, the system prompt, …) joined by newlines. Only those fields: never a header,
// a key, or any other field of the body.

import { promptText } from './prompt-size.ts';

export interface LoggedPrompt {
  readonly text: string;
  /** The text was longer than the bound and was cut (at a character boundary). */
  readonly truncated: boolean;
}

export function loggedPrompt(
  endpoint: string,
  json: Readonly<Record<string, unknown>>,
  maxBytes: number,
): LoggedPrompt | undefined {
  const text = promptText(endpoint, json).pieces.join('\n');
  if (text === '') return undefined;
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return { text, truncated: false };
  // Cut at the bound, then drop a partial character (a UTF-8 continuation run) at the end.
  let end = maxBytes;
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end -= 1;
  return { text: bytes.subarray(0, end).toString('utf8'), truncated: true };
}
