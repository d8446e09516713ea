// One HTTP exchange whose answer is read as text, bounded in time (the whole exchange) and bytes.
// Never throws (but on a URL that does not parse).

import { boundedExchange, type ExchangeDispatcher } from './bounded-exchange.ts';
import { deadline } from './deadline.ts';

export type TextAnswer =
  | { readonly ok: true; readonly status: number; readonly text: string }
  | { readonly ok: false; readonly status: number | undefined; readonly error: string };

/** What sends the exchange: undici's Dispatcher (Agent, Pool) is one, and so is the CLI's node:http one. */
export type TextRequester = ExchangeDispatcher;

export interface BoundedRequestOptions {
  readonly dispatcher: TextRequester;
  readonly headers?: Record<string, string>;
  readonly timeoutMs: number;
  readonly maxBytes: number;
  readonly signal?: AbortSignal;
  readonly method?: 'GET' | 'POST' | 'DELETE';
  readonly body?: string;
}

export async function requestBoundedText(url: string, options: BoundedRequestOptions): Promise<TextAnswer> {
  const bound = deadline(options.timeoutMs, options.signal);
  const target = new URL(url);
  try {
    const answer = await boundedExchange(
      options.dispatcher,
      {
        origin: target.origin,
        path: target.pathname + target.search,
        method: options.method ?? 'GET',
        headers: options.body === undefined ? options.headers : { 'content-type': 'application/json', ...options.headers },
        body: options.body,
      },
      { maxBytes: options.maxBytes, signal: bound.signal },
    );
    if (answer.kind === 'answer') return { ok: true, status: answer.status, text: answer.bytes.toString('utf8') };
    if (answer.kind === 'too-large')
      return { ok: false, status: answer.status, error: `answer exceeds ${options.maxBytes} bytes` };
    if (bound.timedOut) return { ok: false, status: answer.status, error: `timed out after ${options.timeoutMs}ms` };
    return { ok: false, status: answer.status, error: answer.error.message };
  } finally {
    bound.done();
  }
}
