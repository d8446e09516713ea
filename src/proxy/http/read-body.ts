// Reads a request body into memory, bounded by `maxBytes` (the `model` field must be read, and the
// bytes are replayed upstream on failover). Time is bounded by the server's requestTimeout.

import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { appended } from '#src/core/appended.ts';
import { badRequest, bodyTooLarge, type GatewayError } from '#src/core/errors.ts';

/**
 * Where a body read through callbacks goes: all of it, or why it could not be read; told once.
 * `bytesSeen`: the body's size as far as known when the read failed (the declared length when that
 * alone refused it, else the bytes read until the read stopped).
 */
export interface BodySink {
  bodyRead(raw: Buffer): void;
  bodyFailed(error: GatewayError, bytesSeen: number): void;
}

/** Reads the body into `sink` (no promise): at once when its declared length is already too large. */
export function readBodyInto(req: IncomingMessage, maxBytes: number, sink: BodySink): void {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > maxBytes) {
    sink.bodyFailed(bodyTooLarge(maxBytes), Number(declared));
    return;
  }
  // Most bodies are one chunk: it is the body, no list; a list holds the chunks after it (core/appended.ts).
  let first: Buffer | undefined;
  let more: Buffer[] | undefined;
  let total = 0;
  const onData = (chunk: Buffer): void => {
    total += chunk.length;
    if (total > maxBytes) {
      stopReading(req, onData, onEnd, onStop);
      req.resume();
      sink.bodyFailed(bodyTooLarge(maxBytes), total);
      return;
    }
    if (first === undefined) first = chunk;
    else more = appended(more, chunk);
  };
  const onEnd = (): void => {
    stopReading(req, onData, onEnd, onStop);
    sink.bodyRead(first === undefined ? Buffer.alloc(0) : more === undefined ? first : Buffer.concat([first, ...more], total));
  };
  // One listener for 'error' (told its error) and 'close' (told nothing; after the whole body, nothing to tell).
  const onStop = (error?: Error): void => {
    if (error === undefined && req.complete) return;
    stopReading(req, onData, onEnd, onStop);
    const why =
      error === undefined
        ? 'the client closed the connection before sending the whole body'
        : `could not read the request body: ${error.message}`;
    sink.bodyFailed(badRequest(why), total);
  };
  req.on('data', onData);
  req.on('end', onEnd);
  req.on('error', onStop);
  req.on('close', onStop);
}

/** The listeners readBodyInto added, taken off: its sink is told once. */
function stopReading(
  req: IncomingMessage,
  onData: (chunk: Buffer) => void,
  onEnd: () => void,
  onStop: (error?: Error) => void,
): void {
  req.off('data', onData);
  req.off('end', onEnd);
  req.off('error', onStop);
  req.off('close', onStop);
}

/** The body, read as a promise (the admin routes'). */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => readBodyInto(req, maxBytes, { bodyRead: resolve, bodyFailed: reject }));
}

/** Largest refused remainder read and thrown away so the client can read its 413 (see below). */
const MAX_DISCARDED_BYTES = 16 * 1024 * 1024;

/**
 * Whether a refused body is small enough to read to its end and discard. Closing the connection
 * while the client is still sending makes its kernel see a reset, and most clients then report a
 * broken pipe instead of the 413. Past the bound (or with no declared length) the connection closes.
 */
export function discardableRemainder(headers: IncomingHttpHeaders, maxBytes: number): boolean {
  const declared = Number(headers['content-length']);
  return Number.isSafeInteger(declared) && declared <= Math.max(MAX_DISCARDED_BYTES, 2 * maxBytes);
}
