// One watch request of the Kubernetes API, read as it streams: one JSON event a line, each line
// bounded in bytes, the head bounded in time, and the silence between bytes bounded (undici's own
// headers and body timers). A 200 opens it; any other answer ends it with the API's Status words
// (410: list again). Never throws: every end is a WatchEnd.

import { Buffer } from 'node:buffer';
import type { ExchangeController, ExchangeDispatcher, ExchangeHeaders } from '#src/core/bounded-exchange.ts';
import type { WatchEnd, WatchHandlers } from './k8s-api.ts';
import { statusText } from './k8s-watch.ts';

export interface WatchStreamOptions {
  readonly headers: Record<string, string>;
  readonly headersTimeoutMs: number;
  /** No byte (event or bookmark) for this long ends the watch. */
  readonly idleTimeoutMs: number;
  readonly maxLineBytes: number;
  readonly maxErrorBytes: number;
  readonly handlers: WatchHandlers;
  readonly signal: AbortSignal;
}

const NEWLINE = 0x0a;

export function watchLines(dispatcher: ExchangeDispatcher, url: string, options: WatchStreamOptions): Promise<WatchEnd> {
  const { promise, resolve } = Promise.withResolvers<WatchEnd>();
  const target = new URL(url);
  const state: {
    controller: ExchangeController | undefined;
    status: number | undefined;
    parts: Buffer[];
    size: number;
    ended: WatchEnd | undefined;
    stopped: boolean;
  } = { controller: undefined, status: undefined, parts: [], size: 0, ended: undefined, stopped: false };

  const finish = (end: WatchEnd): void => {
    if (state.ended !== undefined) return;
    state.ended = end;
    options.signal.removeEventListener('abort', onAbort);
    resolve(end);
  };
  /** Ends it from this side: settled first, so the abort's own error is not the outcome. */
  const cut = (end: WatchEnd): void => {
    finish(end);
    state.controller?.abort(new Error(end.kind === 'failed' ? end.reason : 'watch stopped'));
  };
  const onAbort = (): void => cut({ kind: 'closed' });
  if (options.signal.aborted) return Promise.resolve({ kind: 'closed' });
  options.signal.addEventListener('abort', onAbort, { once: true });

  const line = (bytes: Buffer): void => {
    if (state.ended !== undefined) return;
    const text = bytes.toString('utf8').trim();
    if (text === '') return;
    let event: unknown;
    try {
      event = JSON.parse(text);
    } catch {
      cut({ kind: 'failed', reason: 'the watch sent a line that is not JSON' });
      return;
    }
    if (!options.handlers.onEvent(event)) cut({ kind: 'closed' });
  };

  const handler = {
    onRequestStart(controller: ExchangeController): void {
      state.controller = controller;
      if (state.ended !== undefined) controller.abort(new Error('watch stopped'));
    },
    onResponseStart(_controller: ExchangeController, status: number, _headers: ExchangeHeaders): void {
      if (status < 200) return;
      state.status = status;
      if (status === 200) options.handlers.onOpen();
    },
    onResponseData(_controller: ExchangeController, chunk: Buffer): void {
      if (state.ended !== undefined) return;
      if (state.status !== 200) {
        if (state.size + chunk.length <= options.maxErrorBytes) state.parts.push(chunk);
        state.size += chunk.length;
        return;
      }
      let start = 0;
      for (;;) {
        const newline = chunk.indexOf(NEWLINE, start);
        const end = newline === -1 ? chunk.length : newline;
        if (state.size + (end - start) > options.maxLineBytes) {
          state.parts = [];
          cut({ kind: 'failed', reason: `a watch event exceeds ${options.maxLineBytes} bytes` });
          return;
        }
        if (newline === -1) break;
        state.parts.push(chunk.subarray(start, newline));
        const whole = state.parts.length === 1 ? (state.parts[0] as Buffer) : Buffer.concat(state.parts);
        state.parts = [];
        state.size = 0;
        line(whole);
        if (state.ended !== undefined) return;
        start = newline + 1;
      }
      if (start < chunk.length) {
        state.parts.push(chunk.subarray(start));
        state.size += chunk.length - start;
      }
    },
    onResponseEnd(): void {
      if (state.status === 200) {
        if (state.parts.length > 0) line(Buffer.concat(state.parts));
        finish({ kind: 'closed' });
        return;
      }
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(state.parts).toString('utf8'));
      } catch {
        body = undefined;
      }
      const words = `watch: HTTP ${state.status ?? 0} ${statusText(body)}`;
      finish(state.status === 410 ? { kind: 'gone', reason: words } : { kind: 'failed', reason: words });
    },
    onResponseError(_controller: ExchangeController | undefined, error: Error): void {
      const name = (error as { code?: unknown }).code;
      const reason =
        name === 'UND_ERR_BODY_TIMEOUT'
          ? `watch: no event or bookmark within ${options.idleTimeoutMs}ms`
          : name === 'UND_ERR_HEADERS_TIMEOUT'
            ? `watch: no answer within ${options.headersTimeoutMs}ms`
            : `watch: ${error.message}`;
      finish(state.status === 200 ? { kind: 'broken', reason } : { kind: 'failed', reason });
    },
  };

  try {
    dispatcher.dispatch(
      {
        origin: target.origin,
        path: target.pathname + target.search,
        method: 'GET',
        headers: options.headers,
        headersTimeout: options.headersTimeoutMs,
        bodyTimeout: options.idleTimeoutMs,
      },
      handler,
    );
  } catch (error) {
    finish({ kind: 'failed', reason: `watch: ${error instanceof Error ? error.message : String(error)}` });
  }
  return promise;
}
