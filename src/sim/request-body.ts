// Reads a request body (bounded in bytes) and classifies it as absent, JSON, or invalid JSON,
// keeping the parse error so each kind can word its own complaint.

import type { IncomingMessage } from 'node:http';

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
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk as Uint8Array);
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

/** Character offset of a JSON.parse error, when V8's message names one. */
export function jsonErrorOffset(error: SyntaxError, text: string): number {
  const match = /position (\d+)/.exec(error.message);
  return match?.[1] === undefined ? text.length : Number(match[1]);
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The `model` named by a request: the JSON body's string `model`, else `?model=`. */
export function requestedModel(body: RequestBody, query: Readonly<Record<string, string>>): string | undefined {
  if (body.kind === 'json' && isRecord(body.value) && typeof body.value['model'] === 'string') {
    return body.value['model'];
  }
  return query['model'];
}
