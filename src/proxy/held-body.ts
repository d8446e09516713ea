// Reading (part of) an upstream body into memory before deciding what to do with it: a whole JSON
// answer held until it parses, or an error body read to recognise it. Always bounded.

import type { Readable } from 'node:stream';
import type { HeldReservation } from './held-budget.ts';

export type HeldBody =
  | { readonly kind: 'complete'; readonly bytes: Buffer }
  /** Past a bound: `head` was read, the rest is still in `body` (paused). */
  | { readonly kind: 'too_big'; readonly head: Buffer }
  | { readonly kind: 'failed'; readonly error: unknown };

/**
 * Reads a body up to `maxBytes`, each chunk reserved from the shared budget, without consuming
 * more; past either bound the stream stays usable (paused) for the caller to stream on.
 */
export function holdBody(body: Readable, maxBytes: number, reservation: HeldReservation): Promise<HeldBody> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const settle = (result: HeldBody): void => {
      body.off('data', onData);
      body.off('end', onEnd);
      body.off('error', onError);
      resolve(result);
    };
    const onData = (chunk: Buffer): void => {
      chunks.push(chunk);
      total += chunk.length;
      if (total > maxBytes || !reservation.take(chunk.length)) {
        body.pause();
        settle({ kind: 'too_big', head: Buffer.concat(chunks) });
      }
    };
    const onEnd = (): void => settle({ kind: 'complete', bytes: Buffer.concat(chunks) });
    const onError = (error: unknown): void => settle({ kind: 'failed', error });
    body.on('data', onData);
    body.on('end', onEnd);
    body.on('error', onError);
  });
}

export function parsesAsJson(bytes: Buffer): boolean {
  try {
    JSON.parse(bytes.toString('utf8'));
    return true;
  } catch {
    return false;
  }
}
