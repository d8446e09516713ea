// A small, bounded HTTP client for the sim contract tests (undici `request`): every call has a time
// limit and a byte limit, and SSE bodies split into events.

import { setTimeout as delay } from 'node:timers/promises';
import { request } from 'undici';

export interface HttpAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly text: string;
}

export interface CallOptions {
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
  readonly signal?: AbortSignal;
  readonly timeoutMs?: number;
}

const MAX_BODY_BYTES = 1024 * 1024;

/** Calls `baseUrl + path`; a non-string body is sent as JSON. */
export async function call(
  baseUrl: string,
  method: 'GET' | 'POST' | 'HEAD',
  path: string,
  options: CallOptions = {},
): Promise<HttpAnswer> {
  const timeoutMs = options.timeoutMs ?? 5000;
  const signals = [AbortSignal.timeout(timeoutMs), ...(options.signal === undefined ? [] : [options.signal])];
  const body =
    options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  const response = await request(`${baseUrl}${path}`, {
    method,
    body,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...options.headers },
    signal: AbortSignal.any(signals),
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of response.body) {
    const buffer: Buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    total += buffer.length;
    if (total > MAX_BODY_BYTES) throw new Error(`body over ${MAX_BODY_BYTES} bytes`);
    chunks.push(buffer);
  }
  return { status: response.statusCode, headers: response.headers, text: Buffer.concat(chunks).toString('utf8') };
}

export function json(answer: HttpAnswer): unknown {
  return JSON.parse(answer.text);
}

/** `JSON.parse` into a record, for reading fields in assertions. */
export function record(value: unknown): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`not an object: ${String(value)}`);
  return Object.fromEntries(Object.entries(value));
}

export function list(value: unknown): unknown[] {
  if (!Array.isArray(value)) throw new Error(`not an array: ${JSON.stringify(value)}`);
  return value;
}

export interface SseMessage {
  readonly event: string | undefined;
  readonly data: string;
}

export function sseMessages(text: string): SseMessage[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const lines = block.split('\n');
      const event = lines.find((l) => l.startsWith('event: '))?.slice(7);
      const data = lines
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice(6))
        .join('\n');
      return { event, data };
    });
}

/** The `data:` payloads of an SSE body, JSON-parsed except `[DONE]`. */
export function sseData(text: string): unknown[] {
  return sseMessages(text).map((m) => (m.data === '[DONE]' ? '[DONE]' : JSON.parse(m.data)));
}

/** Polls `check` every 5 ms until it returns true, failing after `timeoutMs`. */
export async function waitUntil(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > deadline) throw new Error('condition not met in time');
    await delay(5);
  }
}

/** Polls the async `check` every 5 ms until it resolves true, failing after `timeoutMs`. */
export async function eventually(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error('condition not met in time');
    await delay(5);
  }
}

export function keysOf(value: unknown): string[] {
  return Object.keys(record(value));
}

/** A chat body with one user message. */
export function chat(content: string, extra: Readonly<Record<string, unknown>> = {}): Record<string, unknown> {
  return { messages: [{ role: 'user', content }], ...extra };
}
