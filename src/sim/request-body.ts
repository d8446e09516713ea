// Reads a request body (bounded in bytes) and classifies it as absent, JSON, or invalid JSON,
// keeping the parse error so each kind can word its own complaint.

import type { IncomingMessage } from 'node:http';
import { isRecord } from '#src/core/is-record.ts';

export type RequestBody =
  | { readonly kind: 'empty' }
  | { readonly kind: 'json'; readonly value: unknown }
  | { readonly kind: 'invalid'; readonly text: string; readonly error: SyntaxError };

export const MAX_SIM_BODY_BYTES = 16 * 1024 * 1024;

export class BodyTooLargeError extends Error {
  constructor(maxBytes: number) {
    super(`request body exceeds ${maxBytes} bytes`);
    this.name = 'BodyTooLargeError';
  }
}

export async function readRequestText(req: IncomingMessage, maxBytes = MAX_SIM_BODY_BYTES): Promise<string> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of req) {
    const buffer: Buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    total += buffer.length;
    if (total > maxBytes) throw new BodyTooLargeError(maxBytes);
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export function classifyBody(text: string): RequestBody {
  if (text.trim() === '') return { kind: 'empty' };
  try {
    return { kind: 'json', value: JSON.parse(text) };
  } catch (error) {
    const syntaxError = error instanceof SyntaxError ? error : new SyntaxError(String(error));
    return { kind: 'invalid', text, error: syntaxError };
  }
}

function isCutShort(prefix: string): boolean {
  try {
    JSON.parse(prefix);
    return true;
  } catch (error) {
    const message = error instanceof Error ? error.message : '';
    const position = /at position (\d+)/.exec(message)?.[1];
    if (position !== undefined) return Number(position) >= prefix.length;
    return /end of JSON input|Unterminated string/.test(message);
  }
}

/**
 * Offset of the first character that makes `text` invalid JSON (text.length when it just ends too
 * early). V8 does not always say, so this finds the shortest prefix that is wrong, not merely cut
 * short: being wrong only grows with the prefix, so a binary search finds it.
 */
export function jsonErrorOffset(text: string): number {
  let low = 0;
  let high = text.length;
  if (isCutShort(text)) return text.length;
  while (low < high) {
    const middle = Math.floor((low + high) / 2);
    if (isCutShort(text.slice(0, middle + 1))) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** The `model` named by a request: the JSON body's string `model`, else `?model=`. */
export function requestedModel(body: RequestBody, query: Readonly<Record<string, string>>): string | undefined {
  if (body.kind === 'json' && isRecord(body.value) && typeof body.value['model'] === 'string') {
    return body.value['model'];
  }
  return query['model'];
}
