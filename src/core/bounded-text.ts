// One HTTP exchange whose answer is read as text, bounded in time (the whole exchange) and bytes.
// Never throws.

import { deadline } from './deadline.ts';

export type TextAnswer =
  | { readonly ok: true; readonly status: number; readonly text: string }
  | { readonly ok: false; readonly status: number | undefined; readonly error: string };

/** The one request shape this file asks; undici's Dispatcher (Agent, Pool) has it, and so does the CLI's node:http one. */
export interface TextRequester {
  request(options: {
    origin: string;
    path: string;
    method: 'GET' | 'POST';
    headers?: Record<string, string> | undefined;
    body?: string | undefined;
    signal: AbortSignal;
  }): Promise<{ readonly statusCode: number; readonly body: RequestedBody }>;
}

/** An answer's body as this file reads it: chunks, an error event, and an early end. */
export interface RequestedBody extends AsyncIterable<unknown> {
  on(event: 'error', listener: (error: Error) => void): unknown;
  destroy(): unknown;
}

export interface BoundedRequestOptions {
  readonly dispatcher: TextRequester;
  readonly headers?: Record<string, string>;
  readonly timeoutMs: number;
  readonly maxBytes: number;
  readonly signal?: AbortSignal;
  readonly method?: 'GET' | 'POST';
  readonly body?: string;
}

export async function requestBoundedText(url: string, options: BoundedRequestOptions): Promise<TextAnswer> {
  const bound = deadline(options.timeoutMs, options.signal);
  const signal = bound.signal;
  const target = new URL(url);
  let status: number | undefined;
  try {
    const response = await options.dispatcher.request({
      origin: target.origin,
      path: target.pathname + target.search,
      method: options.method ?? 'GET',
      headers: options.body === undefined ? options.headers : { 'content-type': 'application/json', ...options.headers },
      body: options.body,
      signal,
    });
    status = response.statusCode;
    // Destroying an undici body early emits 'error'; keep it from becoming an uncaught exception.
    response.body.on('error', () => {});
    const chunks: Buffer[] = [];
    let total = 0;
    for await (const chunk of response.body) {
      total += (chunk as Buffer).length;
      if (total > options.maxBytes) {
        response.body.destroy();
        return { ok: false, status, error: `answer exceeds ${options.maxBytes} bytes` };
      }
      chunks.push(chunk as Buffer);
    }
    return { ok: true, status, text: Buffer.concat(chunks).toString('utf8') };
  } catch (error) {
    if (bound.timedOut) return { ok: false, status, error: `timed out after ${options.timeoutMs}ms` };
    return { ok: false, status, error: error instanceof Error ? error.message : String(error) };
  } finally {
    bound.done();
  }
}
