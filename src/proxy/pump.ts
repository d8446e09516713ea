// Copies a streamed upstream body to the client chunk by chunk, with backpressure both ways.

import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { describeError } from './attempt-result.ts';

export interface PumpResult {
  readonly ok: boolean;
  readonly error: string;
  readonly clientGone: boolean;
  readonly firstByteAt: number | undefined;
}

/** Copies body to res; ends res when body ends, never on failure (the caller decides how). */
export function pump(body: Readable, res: ServerResponse, monotonicMs: () => number): Promise<PumpResult> {
  return new Promise((resolve) => {
    let firstByteAt: number | undefined;
    let settled = false;
    const finish = (result: Omit<PumpResult, 'firstByteAt'>): void => {
      if (settled) return;
      settled = true;
      body.off('data', onData);
      body.off('end', onEnd);
      body.off('error', onError);
      res.off('close', onResClose);
      res.off('drain', onDrain);
      resolve({ ...result, firstByteAt });
    };
    const onData = (chunk: Buffer): void => {
      if (firstByteAt === undefined) firstByteAt = monotonicMs();
      if (!res.write(chunk)) body.pause();
    };
    const onDrain = (): void => {
      body.resume();
    };
    const onEnd = (): void => {
      if (firstByteAt === undefined) firstByteAt = monotonicMs();
      res.end();
      finish({ ok: true, error: '', clientGone: false });
    };
    const onError = (error: Error): void => {
      finish({ ok: false, error: describeError(error), clientGone: false });
    };
    const onResClose = (): void => {
      if (res.writableFinished) return;
      body.destroy();
      finish({ ok: false, error: 'client closed the connection', clientGone: true });
    };
    body.on('data', onData);
    body.on('end', onEnd);
    body.on('error', onError);
    res.on('close', onResClose);
    res.on('drain', onDrain);
  });
}
