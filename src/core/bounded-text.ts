// One HTTP exchange whose answer is read as text, bounded in time (the whole exchange) and bytes.
// Never throws.

import type { Dispatcher } from 'undici';
import { deadline } from './deadline.ts';

export type TextAnswer =
  | { readonly ok: true; readonly status: number; readonly text: string }
  | { readonly ok: false; readonly status: number | undefined; readonly error: string };

export interface BoundedRequestOptions {
  readonly dispatcher: Dispatcher;
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
